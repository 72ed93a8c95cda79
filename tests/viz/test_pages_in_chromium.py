"""The pages in headless Chromium: one node per instruction, the highlighted set equals the
pass's matches, clicks show HLO lines and kernel links resolve, no network request, and a
screenshot of each page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tilecc.hlo.parser import parse_module
from tilecc.passes.pass_base import lookup_pass
from tilecc.viz.browser import RENDERED, open_page, wait_until
from tilecc.viz.hlo_views import module_section, pass_section
from tilecc.viz.kernel_views import check_outputs, kernel_section
from tilecc.viz.page import write_page
from tilecc.viz.pass_record import record_pass

pytestmark = pytest.mark.browser

ROOT = Path(__file__).parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "hlo" / "psum_max.spmd.hlo"


def _load(browser, path: Path, screenshot: Path):
    loaded = open_page(browser, path)
    wait_until(loaded.page, RENDERED)
    loaded.page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    own = path.resolve().as_uri()
    assert [r for r in loaded.requests if r != own and not r.startswith("data:")] == []
    assert loaded.errors == []
    return loaded


def _names(page, selector: str, module_data: dict) -> list[str]:
    """The instruction names behind the SVG nodes matched by `selector` (ids <prefix><k>,
    with a suffix in neighbourhood graphs)."""
    ids = page.eval_on_selector_all(selector, "ns => ns.map(n => n.id)")
    cut = len(module_data["prefix"])
    return [module_data["insts"][int(re.match(r"\d+", i[cut:]).group())][0] for i in ids]


def test_module_page_has_one_node_per_instruction(browser, tmp_path):
    module = parse_module(FIXTURE.read_text())
    write_page(str(tmp_path / "g.html"), "g", [module_section(module)])
    loaded = _load(browser, tmp_path / "g.html", tmp_path / "g.png")
    page = loaded.page
    assert page.eval_on_selector_all(".gbox.whole g.node:not(.copy)", "ns => ns.length") == \
        module.instruction_count()
    # a click shows the instruction's HLO line and its jax source position
    node = page.evaluate("[...document.querySelectorAll('.gbox.whole g.node')]"
                         ".find(n => n.textContent.includes('psum_invariant.7')).id")
    page.click(f"#{node}")
    details = page.inner_text(".details")
    assert "all-reduce(%squeeze.3), channel_id=1" in details
    assert "jit(psum_max)/shard_map/psum_invariant" in details and "regenerate.py:" in details


@pytest.mark.parametrize("name", ["decompose-int-all-reduce", "decompose-scalar-reduce"])
def test_pass_page_highlights_exactly_the_matches(browser, tmp_path, name):
    info = lookup_pass(name)
    run = record_pass(info, FIXTURE.read_text())
    expected = [i.name for i in info.create().matches(run.before)]
    section = pass_section(run, (True, "equal"))
    write_page(str(tmp_path / "p.html"), name, [section])
    page = _load(browser, tmp_path / "p.html", tmp_path / f"{name}.png").page
    before, after = ".side.before .gbox.whole", ".side.after .gbox.whole"
    b_data, a_data = section.data["before"], section.data["after"]
    assert _names(page, f"{before} g.node.match", b_data) == expected
    removed = set(_names(page, f"{before} g.node.removed", b_data)) | set(expected)
    assert removed == {n for m in run.matches for n in m.removed}
    assert set(_names(page, f"{after} g.node.added", a_data)) == \
        {n for m in run.matches for n in m.added}
    assert page.eval_on_selector_all(f"{after} g.node:not(.copy)", "ns => ns.length") == \
        run.after.instruction_count()
    assert "--verify: equal" in page.inner_text(".pass-head")
    ids = page.eval_on_selector_all("g.node", "ns => ns.map(n => n.id)")
    assert len(ids) == len(set(ids))      # an instruction drawn twice keeps ids unique
    # the jump link of each match lands on its before / after neighbourhood
    for j, link in enumerate(page.eval_on_selector_all(".matches a", "as => as.map(a => "
                                                                       "a.getAttribute('href'))")):
        block = page.query_selector(link)
        assert block is not None and expected[j] in block.inner_text()
        assert len(block.query_selector_all("g.node.match")) == 1


def test_kernel_page_links_source_klr_and_bir(browser, tmp_path):
    from tilecc.demo_stages.nki import load_example
    from tilecc.nki.driver import run_traced, trace_kernel
    example = load_example(ROOT / "examples" / "kernels" / "softmax_row.py")
    inputs = example.make_inputs(np.random.default_rng(0))
    traced = trace_kernel(example.KERNEL, *inputs)
    got = run_traced(traced, {t.name: a for t, a in zip(traced.kernel.inputs, inputs)})[0]
    check = check_outputs([("out", got, example.reference(*inputs))], "numpy reference",
                          example.TOLERANCE)
    section = kernel_section(traced.kernel, check)
    write_page(str(tmp_path / "k.html"), "k", [section])
    page = _load(browser, tmp_path / "k.html", tmp_path / "k.png").page
    data = section.data
    for op in data["klr"]:          # every operator's source line is an element of the page
        assert page.query_selector(f"#ksrc-{op['line'] - 1}") is not None
    line = data["klr"][2]["line"]   # the exponential
    page.click(f"#ksrc-{line - 1}")
    marked = page.eval_on_selector_all(".hl", "ns => ns.map(n => n.id)")
    want_klr = [j for j, op in enumerate(data["klr"]) if op["line"] == line]
    want_bir = [i for j in want_klr for i in data["klr"][j]["bir"]]
    assert sorted(marked) == sorted([f"ksrc-{line - 1}"] + [f"kklr-{j}" for j in want_klr] +
                                    [f"kbir-{i}" for i in want_bir] +
                                    [f"kg-{i}" for i in want_bir])
    assert page.eval_on_selector_all(".bir-graph g.node", "ns => ns.length") == len(data["bir"])
    assert page.query_selector(".check img") is not None


def test_a_10k_instruction_page_lays_out_neighbourhoods_only(browser, tmp_path):
    lines = ["HloModule big", "", "ENTRY e {", "  p = f32[8] parameter(0)", "  x0 = f32[8] negate(p)"]
    lines += [f"  x{i} = f32[8] add(x{i - 1}, p)" for i in range(1, 9_999)]
    lines += ["  ROOT r = f32[8] negate(x9998)", "}"]
    module = parse_module("\n".join(lines) + "\n")
    assert module.instruction_count() == 10_001
    section = module_section(module)
    write_page(str(tmp_path / "big.html"), "big", [section])
    loaded = open_page(browser, tmp_path / "big.html")
    page = loaded.page
    wait_until(page, "document.querySelectorAll('.listing .line').length === 10001")
    assert page.eval_on_selector_all("g.node", "ns => ns.length") == 0   # nothing laid out whole
    page.click("#L-n5000")
    wait_until(page, "document.querySelector('.gbox.neighbourhood[data-rendered]') !== null")
    names = _names(page, ".gbox.neighbourhood g.node", section.data["module"])
    # x4999's add, its operands and its users, the hub p capped, not its 9,999 users
    assert "x4999" in names and "p" in names and len(names) <= 1 + 2 * 24
    assert [r for r in loaded.requests if r.startswith(("http", "ws"))] == []
