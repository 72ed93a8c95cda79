"""Benchmark: writing the HTML pages of a module against tilecc's own parse of that module.

For modules of 10k and 100k instructions (bench/hlo_parse.py's generator, with metadata:
elementwise ops, reduces, int32 all-reduces, so DecomposeIntAllReduce matches every tenth
instruction) it prints, per size:
  parse time (parse_module of the text: the peer),
  the module page (tilecc.viz.hlo_views.module_section + page_html, what
  `hlo-graph -o g.html` writes) and its ratio to the parse,
  the before / after page of DecomposeIntAllReduce (pass_section + page_html of a recorded
  run; the pass run itself is not counted) and its ratio to the parse of the two modules it
  shows (before and after: the after module is twice as big, every match adds 11
  instructions), and the page sizes in MB.
Target: each page <= 1x its parse. Layout is not part of writing: the browser does it,
for what is looked at (tilecc/viz/__init__.py). Best CPU times of interleaved runs.

Usage: python bench/viz.py [--sizes 10000,100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from hlo_parse import best_times, generate_module

from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.pass_base import lookup_pass
from tilecc.viz.hlo_views import module_section, pass_section
from tilecc.viz.page import page_html
from tilecc.viz.pass_record import record_pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    header = (f"{'instr':>7} | {'parse ms':>9} | {'module page ms':>14} {'ratio':>6} "
              f"{'MB':>5} | {'parse both':>11} {'pass page ms':>12} {'ratio':>6} {'MB':>5} "
              f"{'matches':>7}")
    print(header)
    print("-" * len(header))
    for size in (int(s) for s in args.sizes.split(",")):
        text = generate_module(size, with_metadata=True)
        module = parse_module(text)
        start = time.process_time()
        run = record_pass(lookup_pass("decompose-int-all-reduce"), text)
        record_ms = (time.process_time() - start) * 1e3
        run.after_text = after_text = print_module(run.after)   # hlo-opt's dump holds it
        module_page = page_html("m", [module_section(module, text=text)])[0]
        pass_page = page_html("p", [pass_section(run)])[0]
        t_parse, t_parse_after, t_module, t_pass = best_times(
            [lambda: parse_module(text), lambda: parse_module(after_text),
             lambda: page_html("m", [module_section(module, text=text)]),
             lambda: page_html("p", [pass_section(run)])], args.repeat)
        t_both = t_parse + t_parse_after
        print(f"{module.instruction_count():>7} | {t_parse * 1e3:>9.1f} | {t_module * 1e3:>14.1f} "
              f"{t_module / t_parse:>6.2f} {len(module_page) / 1e6:>5.1f} | "
              f"{t_both * 1e3:>11.1f} {t_pass * 1e3:>12.1f} {t_pass / t_both:>6.2f} "
              f"{len(pass_page) / 1e6:>5.1f} {len(run.matches):>7}")
        print(f"{'':>7}   (recording the pass run for the pass page: {record_ms:.0f} ms, "
              f"two parses and the pass)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
