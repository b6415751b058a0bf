"""flowlike.version (torch.version): the torch release flowlike follows, and no accelerator toolkits."""
__version__ = "2.13.0+flowlike.0.1.0"
__all__ = ["__version__", "debug", "cuda", "hip", "xpu", "git_version"]

debug = False
cuda = None   # flowlike is built without CUDA (torch.version.cuda is None on a CPU build)
hip = None
xpu = None
git_version = "unknown"
