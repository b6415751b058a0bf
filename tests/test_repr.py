"""Golden reprs of flowlike tensors and their attributes (expecttest: EXPECTTEST_ACCEPT=1 rewrites them)."""
import expecttest

import flowlike as fl


class TestRepr(expecttest.TestCase):
    def test_float_matrix(self):
        self.assertExpectedInline(repr(fl.arange(6).reshape(2, 3) / 4), """\
tensor([[0.0000, 0.2500, 0.5000],
        [0.7500, 1.0000, 1.2500]])""")

    def test_dtype_and_grad_suffixes(self):
        self.assertExpectedInline(repr(fl.tensor([1, 2], dtype=fl.int32)), """tensor([1, 2], dtype=torch.int32)""")
        x = fl.tensor([1.0, -2.0], requires_grad=True)
        self.assertExpectedInline(repr(x), """tensor([ 1., -2.], requires_grad=True)""")
        self.assertExpectedInline(repr(x * 2), """tensor([ 2., -4.], grad_fn=<MulBackward0>)""")

    def test_scientific_and_summarized(self):
        self.assertExpectedInline(repr(fl.tensor([1e-8, 1.0, 1e8])), """tensor([1.0000e-08, 1.0000e+00, 1.0000e+08])""")
        self.assertExpectedInline(repr(fl.arange(2000)), """tensor([   0,    1,    2,  ..., 1997, 1998, 1999])""")

    def test_shape_dtype_device(self):
        t = fl.zeros(2, 3, dtype=fl.float16)
        self.assertExpectedInline(repr((t.shape, t.dtype, t.device)), """(torch.Size([2, 3]), torch.float16, device(type='cpu'))""")

    def test_empty_and_zero_dim(self):
        self.assertExpectedInline(repr(fl.zeros(0, 3)), """tensor([], size=(0, 3))""")
        self.assertExpectedInline(repr(fl.tensor(2.5, dtype=fl.bfloat16)), """tensor(2.5000, dtype=torch.bfloat16)""")
