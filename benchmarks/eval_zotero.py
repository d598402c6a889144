"""A cold start from a Zotero collection, beside the BibTeX cold start and the liked papers'.

    python benchmarks/eval_zotero.py [--topics rag,robot-learning,visual-generation] [--cold N] [--days N]

The reader of ``eval_feedback.py`` (the same corpus days, judgements and digests), with no query,
starting from the first N relevant papers of the corpus (``--cold``, default 30) in three ways,
never rating anything:

* ``cold``: rated up before day 1 (eval_feedback.py's ``cold`` run);
* ``bibtex``: exported by hand to ``liked.bib`` (``watcher saved --to bibtex`` writes it) and
  named as the profile's ``examples``;
* ``zotero``: the items of a Zotero collection (``zotero = {...}``), served by the local stand-in
  for the Zotero Web API of the tests (tests/servers/zoteroserver.py) as Zotero's own arXiv import
  writes them, and read by watcher's sync before day 1.

In the ``bibtex`` and ``zotero`` runs the liked papers are in the reader's library, not in the
corpus: they are taken out of the days (never stored, never counted), so the examples are what
the file or the collection says of them: title, authors and abstract. The liked papers are left
out of the counts of all three. The BibTeX and Zotero cold starts read the same papers and should
score alike: a gap is a paper one of them reads worse.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))  # the stand-in Zotero Web API

from eval_feedback import LAST, TOPICS, day_papers, line, read_judgements, simulate  # noqa: E402

COLLECTION = "DEVP2345"


def liked_papers(days, judged: dict, cold: int) -> list:
    """The first ``cold`` relevant papers of the corpus, in order (as eval_feedback's ``cold``)."""
    seen: dict = {}
    for _, papers in days:
        for p in papers:
            seen.setdefault(p.key, p)
    return [p for k, p in seen.items() if judged.get(k)][:cold]


def run_topic(judged: dict, days, cold: int) -> dict:
    from zoteroserver import ZoteroServer

    from watcher.present.bibtex import write
    from watcher.store import now_utc
    from watcher.zotero.client import paper_item
    from watcher.zotero.sync import sync

    liked = liked_papers(days, judged, cold)
    keys = {p.key for p in liked}
    without = [(day, [p for p in papers if p.key not in keys]) for day, papers in days]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out["cold"] = simulate(days, judged, None, False, [p.key for p in liked], tmp)
        (tmp / "liked.bib").write_text(write(liked), encoding="utf-8")
        out["bibtex"] = simulate(without, judged, None, False, [], tmp, profile={"examples": ["liked.bib"]})
        lib = ZoteroServer(public=True)
        try:
            for p in liked:
                lib.add(paper_item(p, COLLECTION), [COLLECTION])
            zotero = {"library_id": str(lib.user), "collection": COLLECTION, "url": lib.url}

            def read(config, store):
                [error] = sync(config, store, now_utc()).values()
                assert error is None, error

            out["zotero"] = simulate(without, judged, None, False, [], tmp, profile={"zotero": zotero},
                                     prepare=read)
        finally:
            lib.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default=",".join(TOPICS))
    ap.add_argument("--cold", type=int, default=30, help="liked papers of the cold start")
    ap.add_argument("--days", type=int, help="only the first N days (a smoke test)")
    args = ap.parse_args()
    days = day_papers()[: args.days] if args.days else day_papers()
    started = time.perf_counter()
    for name in args.topics.split(","):
        judged = read_judgements(HERE / "data" / f"{name}.jsonl")
        results = run_topic(judged, days, args.cold)
        print(f"== {name}: {len(days)} days, cold start from {args.cold} liked papers, no query, no ratings")
        for label, last in (("all days", None), (f"last {LAST} days", LAST)):
            print(f"-- {label}")
            for run, tally in results.items():
                print(line(run, tally.scores(last)))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
