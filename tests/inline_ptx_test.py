#!/usr/bin/env python3
"""cmake/inline_ptx.py: what it writes for a marked call, and what it refuses.

The module's own kernels are checked after expansion, bit for bit, by the simulator tests
(ptx_functions_test, ptx_bpf_move_test) and on the GPU; this test pins the expansion's rules on
small modules: nesting, renaming against the caller's own names, a guarded ret, results by byte,
immediates, and the refusals with the file and line.

    inline_ptx_test.py INLINER PTXAS
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

INLINER, PTXAS = sys.argv[1], sys.argv[2]
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# half_or_square(x, flag): x * x, or x / 2 when flag != 0 (an early, guarded ret); its registers
# share names with the caller's (%x, %p) on purpose
CALLEE = """
.func (.param .f64 result) half_or_square(.param .f64 x_in, .param .b32 flag_in)
{
  .reg .f64 %x, %y;
  .reg .b32 %flag;
  .reg .pred %p;
  ld.param.f64 %x, [x_in];
  ld.param.b32 %flag, [flag_in];
  mul.rn.f64 %y, %x, 0d3FE0000000000000;
  st.param.f64 [result], %y;
  setp.ne.u32 %p, %flag, 0;
  @%p ret;
LOOP:
  mul.rn.f64 %y, %x, %x;
  st.param.f64 [result], %y;
  ret;
}
// two results in one 16-byte parameter, the second from the first callee, inlined too
.func (.param .align 16 .b8 pair[16]) both(.param .f64 x_in)
{
  .reg .f64 %x, %a, %b;
  ld.param.f64 %x, [x_in];
  mov.f64 %a, %x;
  {
    .param .f64 r;
    .param .f64 a0;
    .param .b32 a1;
    st.param.f64 [a0], %x;
    st.param.b32 [a1], 0;
    call (r), half_or_square, (a0, a1);  // inline
    ld.param.f64 %b, [r];
  }
  st.param.v2.f64 [pair], {%a, %b};
  ret;
}
"""

KERNEL = """
.visible .entry k(.param .u64 out_in)
{
  .reg .b64 %out;
  .reg .f64 %x, %p0, %p1;
  .reg .pred %p;
  ld.param.u64 %out, [out_in];
  cvta.to.global.u64 %out, %out;
  ld.global.f64 %x, [%out];
  {
    .param .align 16 .b8 r[16];
    .param .f64 a0;
    st.param.f64 [a0], %x;
    call (r), both, (a0);  // inline
    ld.param.v2.f64 {%p0, %p1}, [r];
  }
  st.global.v2.f64 [%out], {%p0, %p1};
  {
    .param .f64 r;
    .param .f64 a0;
    .param .b32 a1;
    st.param.f64 [a0], 0d4000000000000000;
    st.param.b32 [a1], 1;
    call (r), half_or_square, (a0, a1);
    ld.param.f64 %x, [r];
  }
  st.global.f64 [%out+16], %x;
  ret;
}
"""


def expand(text, name="m.ptx"):
    """(return code, expanded text or None, stderr) of the inliner on one file."""
    with tempfile.TemporaryDirectory() as work:
        source = pathlib.Path(work) / name
        source.write_text(text)
        out = pathlib.Path(work) / "out"
        run = subprocess.run([sys.executable, INLINER, str(out), str(source)], capture_output=True, text=True)
        expanded = (out / name).read_text() if run.returncode == 0 else None
        return run.returncode, expanded, run.stderr


def assembles(text):
    with tempfile.TemporaryDirectory() as work:
        source = pathlib.Path(work) / "x.ptx"
        source.write_text(text)
        run = subprocess.run([PTXAS, "-arch=sm_90", "--warning-as-error", str(source), "-o",
                              str(pathlib.Path(work) / "x.cubin")], capture_output=True, text=True)
        return run.returncode == 0, run.stderr


class Inliner(unittest.TestCase):
    def test_nested_expansion_assembles_and_keeps_unmarked_calls(self):
        code, text, err = expand(HEADER + CALLEE + KERNEL)
        self.assertEqual(code, 0, err)
        kernel = text[text.index(".entry k"):]
        # the marked call (and the one inside `both`) written out; the unmarked one kept
        self.assertNotIn("call (r), both", kernel)
        self.assertIn("call (r), half_or_square, (a0, a1);", kernel)
        self.assertIn("{  // inline both (cmake/inline_ptx.py)", kernel)
        self.assertIn("{  // inline half_or_square (cmake/inline_ptx.py)", kernel)
        # callee names prefixed per site, nested prefixes stacked, the caller's own untouched
        self.assertIn(".reg .f64 %in1_x, %in1_a, %in1_b;", kernel)
        self.assertIn(".reg .f64 %in1_in1_x, %in1_in1_y;", kernel)
        self.assertIn("mov.b64 %in1_x, %x;", kernel)  # the argument, from the caller's %x
        self.assertIn("@%in1_in1_p bra in1_in1_return;", kernel)  # the guarded ret
        self.assertIn("in1_in1_LOOP:", kernel)
        self.assertIn("mov.b32 %in1_in1_flag, 0;", kernel)  # an immediate argument, at its width
        self.assertIn("mov.b64 %p0, %in1_result0;", kernel)  # the results, by byte offset
        self.assertIn("mov.b64 %p1, %in1_result8;", kernel)
        ok, err = assembles(text)
        self.assertTrue(ok, err)

    def test_a_range_keeps_one_prefix_where_a_nested_site_made_the_same_name(self):
        # twice's own %x<2> at kernel site 1 becomes %in1_x<2>, though its own site 1 (one) has
        # made a register %in1_x: the prefixed declaration is not renamed a second time
        module = HEADER + """
.func (.param .f64 r) one(.param .f64 x_in)
{
  .reg .f64 %x;
  ld.param.f64 %x, [x_in];
  add.rn.f64 %x, %x, 0d3FF0000000000000;
  st.param.f64 [r], %x;
  ret;
}
.func (.param .f64 r) twice(.param .f64 x_in)
{
  .reg .f64 %x<2>;
  ld.param.f64 %x0, [x_in];
  {
    .param .f64 s;
    .param .f64 a0;
    st.param.f64 [a0], %x0;
    call (s), one, (a0);  // inline
    ld.param.f64 %x1, [s];
  }
  st.param.f64 [r], %x1;
  ret;
}
.visible .entry k(.param .u64 out_in)
{
  .reg .b64 %out;
  .reg .f64 %v;
  ld.param.u64 %out, [out_in];
  cvta.to.global.u64 %out, %out;
  ld.global.f64 %v, [%out];
  {
    .param .f64 s;
    .param .f64 a0;
    st.param.f64 [a0], %v;
    call (s), twice, (a0);  // inline
    ld.param.f64 %v, [s];
  }
  st.global.f64 [%out], %v;
  ret;
}
"""
        code, text, err = expand(module)
        self.assertEqual(code, 0, err)
        kernel = text[text.index(".entry k"):]
        self.assertIn(".reg .f64 %in1_x<2>;", kernel)
        self.assertIn(".reg .f64 %in1_in1_x;", kernel)
        self.assertIn("mov.b64 %in1_in1_x, %in1_x0;", kernel)
        ok, err = assembles(text)
        self.assertTrue(ok, err)

    def test_unmarked_file_is_copied_as_it_is(self):
        text = HEADER + CALLEE.replace("  // inline", "") + KERNEL.replace("  // inline", "")
        code, out, err = expand(text)
        self.assertEqual(code, 0, err)
        self.assertEqual(out, text)

    def refused(self, text, why):
        code, _, err = expand(text)
        self.assertNotEqual(code, 0)
        self.assertIn("m.ptx: line ", err)
        self.assertIn(why, err)

    def test_refuses_an_instruction_inside_the_call_block(self):
        self.refused(HEADER + CALLEE + KERNEL.replace("    st.param.f64 [a0], %x;\n",
                                                      "    st.param.f64 [a0], %x;\n    add.f64 %x, %x, %x;\n"),
                     "unexpected line in the call block of both")

    def test_refuses_an_argument_stored_at_another_width(self):
        self.refused(HEADER + CALLEE.replace("st.param.b32 [a1], 0;", "st.param.b64 [a1], 0;") + KERNEL,
                     "argument flag_in+0 not stored at 32 bits")

    def test_refuses_a_callee_with_local_memory(self):
        self.refused(HEADER + CALLEE.replace("  .reg .b32 %flag;\n", "  .reg .b32 %flag;\n  .local .b8 spill[8];\n")
                     + KERNEL, "half_or_square declares .local memory of its own")

    def test_refuses_a_label_named_return(self):
        self.refused(HEADER + CALLEE.replace("LOOP:", "return:") + KERNEL, "a label named return")

    def test_refuses_a_marked_call_to_a_later_function(self):
        self.refused(HEADER + KERNEL + CALLEE, "both is not defined before its marked call")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
