"""The Triton kernels flowlike generates for fusion groups, launched unchanged on a CUDA GPU.

flowlike has no CUDA device yet, so the check runs in two steps:
    python benchmarks/triton_on_gpu.py export DIR   # here, with flowlike: the kernels' source, their inputs and the
                                                    # C++ kernels' outputs for several groups
    python benchmarks/triton_on_gpu.py run DIR      # on a machine with a GPU, torch and triton (no flowlike needed)
`run` launches each kernel on CUDA tensors of the captured strides (enable_fp_fusion=False, as the kernels
require), compares with the C++ outputs (bit for bit where the math is flowlike's vec_math, else the largest
difference is printed) and times the 4M-element tanh-GELU chain against torch's eager ops on the GPU.
"""
import json
import math
import os
import re
import sys

import numpy as np

CASES = {
    "tanh_gelu_4m": "0.5 * x * (1 + fl.tanh(0.79788456 * (x + 0.044715 * x ** 3)))",
    "bias_gelu": "fl.nn.functional.gelu(x[:, :64] + x[0, :64]) * 2",
    "softmax": "(lambda e: e / e.sum(-1, keepdim=True))((x[:, :64] - x[:, :64].amax(-1, keepdim=True)).exp())",
    "layer_norm": "(lambda d: d * ((d * d).mean(-1, keepdim=True) + 1e-5).rsqrt())(x[:, :64] - x[:, :64].mean(-1, keepdim=True))",
}


def export(folder):
    import flowlike as fl
    from flowlike import codegen
    from flowlike.codegen import triton as tgen
    codegen.config.async_compile = False
    os.makedirs(folder, exist_ok=True)
    manifest = []
    for name, expr in CASES.items():
        x = fl.randn(1 << 22) if name == "tanh_gelu_4m" else fl.randn(4096, 256)

        class G(fl.nn.Graph):
            def build(self, x):
                return eval(expr, {"fl": fl, "x": x})  # noqa: S307  (the expressions above)
        graph = G()
        graph(x)
        plan = next(iter(graph._plans.values()))
        meta = plan.fusion.meta
        for group in plan.fusion.groups:
            values = plan.program.run([x], group.inputs + group.outputs)
            source = tgen.program_source([group], meta).replace("from flowlike.codegen.triton_math import",
                                                                  "from triton_math import")
            key = f"{name}_{group.name}"
            with open(os.path.join(folder, f"{key}.py"), "w") as fh:
                fh.write(source)
            arrays = {f"v{i}": v.contiguous().numpy() for i, v in enumerate(values)}
            np.savez(os.path.join(folder, f"{key}.npz"), **arrays)
            manifest.append({"key": key, "kernel": group.name, "rows": group.rows, "shape": list(group.shape),
                             "n_in": len(group.inputs),
                             "geometry": [[meta[v][0], meta[v][1], str(meta[v][2]).split(".")[-1]]
                                          for v in group.inputs + group.outputs],
                             "block": (max(16, 1 << (group.shape[-1] - 1).bit_length()) if group.rows
                                       else tgen.block_size(math.prod(group.shape)))})
    with open(os.path.join(folder, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    src = os.path.join(os.path.dirname(tgen.__file__), "triton_math.py")
    with open(src) as fh, open(os.path.join(folder, "triton_math.py"), "w") as out:
        out.write(fh.read())
    print(f"exported {len(manifest)} kernels to {folder}")


def run(folder):
    import importlib.util

    import torch
    import triton
    sys.path.insert(0, folder)
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    for case in json.load(open(os.path.join(folder, "manifest.json"))):
        spec = importlib.util.spec_from_file_location(case["key"], os.path.join(folder, case["key"] + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = getattr(module, case["kernel"])
        data = np.load(os.path.join(folder, case["key"] + ".npz"))
        tensors = []
        for i, (sizes, strides, dtype) in enumerate(case["geometry"]):
            dense = torch.from_numpy(data[f"v{i}"]).cuda()
            t = torch.empty_strided(sizes, strides, dtype=getattr(torch, dtype), device="cuda")
            t.copy_(dense.reshape(sizes)) if i < case["n_in"] else t.zero_()
            tensors.append(t)
        ins, want = tensors[:case["n_in"]], tensors[case["n_in"]:]
        outs = [torch.empty_strided(w.shape, w.stride(), dtype=w.dtype, device="cuda") for w in want]
        grid = (math.prod(case["shape"][:-1]),) if case["rows"] else (-(-math.prod(case["shape"]) // case["block"]),)
        expect = [torch.from_numpy(data[f"v{case['n_in'] + j}"]).cuda().reshape(w.shape) for j, w in enumerate(want)]

        def launch():
            kernel[grid](*outs, *ins, BLOCK=case["block"], enable_fp_fusion=False)
        launch()
        torch.cuda.synchronize()
        for got, exp in zip(outs, expect):
            same = torch.equal(got, exp)
            diff = (got.double() - exp.double()).abs().max().item()
            print(f"{case['key']:<32} equal to the C++ kernel bit for bit: {same}  (max |diff| {diff:.3g})")
        if case["key"].startswith("tanh_gelu_4m"):
            x = ins[[i for i, t in enumerate(ins) if t.numel() > 1][0]]
            eager = lambda: 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x ** 3)))  # noqa: E731
            t_fused = triton.testing.do_bench(launch)
            t_eager = triton.testing.do_bench(eager)
            gb = 2 * x.numel() * 4 / 1e9
            print(f"  4M tanh-GELU on the GPU: fused Triton {t_fused * 1e3:.1f} us ({gb / (t_fused / 1e3):.0f} GB/s), "
                  f"torch eager {t_eager * 1e3:.1f} us: {t_fused / t_eager:.2f}x")


if __name__ == "__main__":
    {"export": export, "run": run}[sys.argv[1]](sys.argv[2])
