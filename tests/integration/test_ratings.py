"""Ratings: the store (m003_ratings), apply_rating, and `watcher rate / ratings / saved / check`
run as a user would, on a database filled from a real corpus day."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime, timezone

import pytest

from conftest import DATA
from helpers import built_once, copy_folder, run_cli
from watcher.models import Paper
from watcher.services.ratings import RatingError, apply_rating, orphaned, ratings, saved
from watcher.store import Store
from watcher.store.records import RatingRow

NOW = datetime(2025, 4, 9, 21, tzinfo=timezone.utc)
PROFILES = ("rag", "vision")


def paper(**kw) -> Paper:
    base = dict(title="Retrieval augmented generation for everything", arxiv_id="2504.00001",
                abstract="We retrieve passages and generate.")
    base.update(kw)
    return Paper(**base)


@pytest.fixture
def store():
    with Store.open(None) as s:
        s.upsert([paper(), paper(arxiv_id="2504.00002", title="Another paper")], NOW)
        yield s


# --- the data ------------------------------------------------------------------------------

def test_a_later_rating_replaces_rating_twice_is_one_and_clear_removes(store):
    apply_rating(store, "up", "rag", "2504.00001", "cli", profiles=PROFILES, now=NOW)
    again = apply_rating(store, "up", "rag", "2504.00001v2", "link", profiles=PROFILES, now=NOW)
    assert not again.changed and len(ratings(store)) == 1
    assert ratings(store)[0].source == "cli"  # the first of two equal ratings stays
    apply_rating(store, "down", "rag", "2504.00001", "web", profiles=PROFILES, now=NOW)
    [row] = ratings(store)
    assert (row.value, row.source, row.profile) == ("down", "web", "rag")
    apply_rating(store, "up", "vision", "2504.00001", "cli", profiles=PROFILES, now=NOW)
    assert [len(x) for x in store.rated_papers("rag")] == [0, 1]
    assert [len(x) for x in store.rated_papers("vision")] == [1, 0]
    assert apply_rating(store, "clear", "rag", "2504.00001", "cli", profiles=PROFILES).changed
    assert [r.profile for r in ratings(store)] == ["vision"]


def test_ratings_are_records_whose_export_gives_each_time_back_as_stored(store):
    apply_rating(store, "up", "rag", "2504.00001", "cli", profiles=PROFILES, now=NOW)
    # a rating of a paper no longer stored, its time kept without an offset
    store.db.execute("INSERT INTO ratings (profile, paper, value, rated_at, source) "
                     "VALUES ('rag', 'title:gone', 'down', '2025-04-10T08:00:00', 'web')")
    rated, gone = ratings(store)
    assert isinstance(rated, RatingRow) and rated.rated_at == NOW and rated.title == paper().title
    assert (gone.arxiv_id, gone.title, gone.rated_at) == (None, None, datetime(2025, 4, 10, 8))
    assert [r.to_json() for r in (rated, gone)] == [
        {"profile": "rag", "paper": "2504.00001", "arxiv_id": "2504.00001", "title": paper().title,
         "value": "up", "rated_at": "2025-04-09T21:00:00+00:00", "source": "cli"},
        {"profile": "rag", "paper": "title:gone", "arxiv_id": None, "title": None,
         "value": "down", "rated_at": "2025-04-10T08:00:00", "source": "web"}]
    assert list(gone.to_json()) == ["profile", "paper", "arxiv_id", "title", "value", "rated_at", "source"]


def test_save_and_unsave_are_global(store):
    apply_rating(store, "save", None, "2504.00002", "cli", profiles=PROFILES, now=NOW)
    apply_rating(store, "save", None, "2504.00002", "link", profiles=PROFILES, now=NOW)
    assert [p.arxiv_id for p, _ in saved(store)] == ["2504.00002"]
    apply_rating(store, "unsave", None, "2504.00002", "cli", profiles=PROFILES)
    assert saved(store) == []


@pytest.mark.parametrize("action, profile, paper_id, problem", [
    ("up", "rag", "2504.99999", "unknown paper"),
    ("up", "gone", "2504.00001", "unknown profile 'gone'"),
    ("down", None, "2504.00001", "needs a profile"),
    ("like", "rag", "2504.00001", "unknown action"),
])
def test_bad_ratings_are_refused_and_record_nothing(store, action, profile, paper_id, problem):
    with pytest.raises(RatingError, match=problem):
        apply_rating(store, action, profile, paper_id, "cli", profiles=PROFILES)
    assert ratings(store) == [] and saved(store) == []


def test_ratings_follow_a_paper_that_gets_its_arxiv_id(store):
    idless = paper(arxiv_id=None, title="A paper first seen without its id")
    store.upsert([idless], NOW)
    apply_rating(store, "up", "rag", idless.key, "cli", profiles=PROFILES, now=NOW)
    apply_rating(store, "save", None, idless.key, "cli", profiles=PROFILES, now=NOW)
    store.upsert([paper(arxiv_id="2504.00003", title="A paper first seen without its id")], NOW)
    assert [r.paper for r in ratings(store)] == ["2504.00003"]
    assert [p.key for p, _ in saved(store)] == ["2504.00003"]


def test_ratings_of_a_removed_profile_are_kept_and_reported(store):
    apply_rating(store, "up", "old-name", "2504.00001", "cli", profiles=("old-name",), now=NOW)
    assert orphaned(store, PROFILES) == {"old-name": 1}
    assert orphaned(store, ("old-name",)) == {}


def test_a_database_without_ratings_migrates_forward_and_keeps_its_papers(tmp_path):
    path = tmp_path / "old.db"
    with Store.open(path) as s:  # make it look like a database from before m003_ratings
        s.upsert([paper()], NOW)
        s.db.execute("DROP TABLE ratings")
        s.db.execute("DROP TABLE saved")
        s.db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm003_ratings'")
    with Store.open(path) as s:
        assert s.count_papers() == 1
        apply_rating(s, "up", "rag", "2504.00001", "cli", profiles=PROFILES, now=NOW)
        assert len(ratings(s)) == 1


# --- the commands --------------------------------------------------------------------------

CONFIG = """
[watcher]
database = "watcher.db"

[source.day]
type = "listing"
path = "day.jsonl.gz"

[profile.rag]
query = '"retrieval-augmented" OR RAG OR "retrieval augmented"'

[profile.{vision}]
query = 'image OR images OR hallucination'

[digest.daily]
profiles = ["rag", "{vision}"]
every = "1d"
channels = ["out"]

[channel.out]
type = "stdout"
"""
BOTH = "2504.05324"  # hybrid retrieval for hallucination mitigation: both profiles select it
RAG_ONLY = "2504.05731"  # retrieval augmented generation with collaborative filtering


def _fetch_the_day(folder):
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", folder / "day.jsonl.gz")
    (folder / "config.toml").write_text(CONFIG.replace("{vision}", "vision"))
    r = run_cli("fetch", cwd=folder)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def folder(tmp_path):
    """The config above and its database after `watcher fetch` of the corpus day (fetched once
    per test process, copied for each test)."""
    return copy_folder(built_once("ratings-day", _fetch_the_day), tmp_path)


def watcher(folder, *args):
    return run_cli(*args, cwd=folder)


def listed(folder) -> list[dict]:
    out = watcher(folder, "ratings", "--to", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_rate_finds_the_profile_or_asks_for_it(folder):
    both = watcher(folder, "rate", "up", BOTH)
    assert both.returncode == 2
    assert both.stderr.decode().strip() == (f"watcher: {BOTH} belongs to several profiles (rag, vision): "
                                            "say which with --profile")
    assert listed(folder) == []
    ok = watcher(folder, "rate", "up", RAG_ONLY)
    assert ok.returncode == 0 and ok.stdout.decode().strip() == f"{RAG_ONLY}: rated up for rag"
    ok = watcher(folder, "rate", "down", BOTH, "--profile", "vision")
    assert ok.returncode == 0, ok.stderr
    assert [(r["paper"], r["profile"], r["value"], r["source"]) for r in listed(folder)] == [
        (RAG_ONLY, "rag", "up", "cli"), (BOTH, "vision", "down", "cli")]
    text = watcher(folder, "ratings", "--profile", "vision").stdout.decode()
    assert "down" in text and BOTH in text and RAG_ONLY not in text


VISION_ONLY = "2504.06027"  # image registration with a diffusion model: only vision selects it


def deliver(folder) -> None:
    """The digest of both profiles, delivered through the pipeline (the corpus day's papers)."""
    out = watcher(folder, "digest", "daily", "--since", "2025-04-09")
    assert out.returncode == 0, out.stderr


def test_a_delivered_papers_rating_goes_to_the_profile_it_was_delivered_under(folder):
    """One digest of two profiles: its message records which profile matched each paper, and a
    rating without --profile goes to that profile only, not to every profile of the digest."""
    deliver(folder)
    for paper, profile in ((RAG_ONLY, "rag"), (VISION_ONLY, "vision"),
                           (BOTH, "vision")):  # both select it; the digest showed it for vision
        out = watcher(folder, "rate", "up", paper)
        assert (out.returncode, out.stdout.decode().strip()) == (0, f"{paper}: rated up for {profile}"), out.stderr
    assert sorted((r["paper"], r["profile"]) for r in listed(folder)) == [
        (BOTH, "vision"), (RAG_ONLY, "rag"), (VISION_ONLY, "vision")]


def test_a_delivery_recorded_without_its_profile_counts_for_its_digests_profiles(folder):
    """Deliveries from before the profile of each paper was recorded (m002 leaves it NULL;
    m008 makes them messages with it NULL): the rating belongs to the digest's profiles."""
    import sqlite3

    deliver(folder)
    conn = sqlite3.connect(folder / "watcher.db")
    with conn:  # the database as those versions left it: the papers, without profiles
        conn.execute("""INSERT INTO issue_papers (digest, day, paper, position, kind, version)
                        SELECT m.digest, m.day, mp.paper, mp.position, mp.kind, mp.version
                        FROM message_papers mp JOIN messages m ON m.id = mp.message""")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm008_messages'")
        conn.execute("DROP TABLE message_papers")
        conn.execute("DROP TABLE messages")
    conn.close()
    for paper in (RAG_ONLY, VISION_ONLY):
        out = watcher(folder, "rate", "up", paper)
        assert (out.returncode, out.stderr.decode().strip()) == (
            2, f"watcher: {paper} belongs to several profiles (rag, vision): say which with --profile")
    with Store.open(folder / "watcher.db", readonly=True) as store:  # m008 ran again
        shown = list(store.db.execute("SELECT paper, profile FROM message_papers"))
    assert {RAG_ONLY, VISION_ONLY} <= {key for key, _ in shown} and {p for _, p in shown} == {None}
    assert listed(folder) == []


def test_a_profile_recorded_but_no_longer_configured_counts_for_its_digests_profiles(folder):
    deliver(folder)
    (folder / "config.toml").write_text(CONFIG.replace("{vision}", "pictures"))  # vision renamed
    out = watcher(folder, "rate", "up", VISION_ONLY)
    assert (out.returncode, out.stderr.decode().strip()) == (
        2, f"watcher: {VISION_ONLY} belongs to several profiles (pictures, rag): say which with --profile")
    out = watcher(folder, "rate", "up", RAG_ONLY)  # recorded under rag, still configured
    assert out.returncode == 0 and out.stdout.decode().strip() == f"{RAG_ONLY}: rated up for rag"


def test_undoing_what_was_never_done_says_so(folder):
    """`rate unsave` of a paper not saved, `rate clear` of one not rated: what was so, not
    "removed ... (already so)"; a second `save` keeps "(already so)"."""
    out = watcher(folder, "rate", "unsave", RAG_ONLY)
    assert out.returncode == 0 and out.stdout.decode() == f"{RAG_ONLY}: was not on the reading list\n"
    out = watcher(folder, "rate", "clear", RAG_ONLY)
    assert out.returncode == 0 and out.stdout.decode() == f"{RAG_ONLY}: had no rating for rag\n"
    assert watcher(folder, "rate", "save", RAG_ONLY).stdout.decode() == f"{RAG_ONLY}: saved\n"
    assert watcher(folder, "rate", "save", RAG_ONLY).stdout.decode() == f"{RAG_ONLY}: saved (already so)\n"
    out = watcher(folder, "rate", "unsave", RAG_ONLY)
    assert out.stdout.decode() == f"{RAG_ONLY}: removed from the reading list\n"
    assert listed(folder) == []


def test_a_paper_named_twice_is_rated_once(folder):
    """By its id twice, or by its id and its title: one rating and one line saying so, not a
    second "(already so)" line for the same paper."""
    assert watcher(folder, "rate", "save", RAG_ONLY).returncode == 0
    title = json.loads(watcher(folder, "saved", "--to", "json").stdout)[0]["title"]
    for names in ([RAG_ONLY, RAG_ONLY], [RAG_ONLY, title], [f"arXiv:{RAG_ONLY}v1", RAG_ONLY]):
        watcher(folder, "rate", "clear", RAG_ONLY)
        out = watcher(folder, "rate", "up", *names)
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode().splitlines() == [f"{RAG_ONLY}: rated up for rag"], names
    assert [(r["paper"], r["value"]) for r in listed(folder)] == [(RAG_ONLY, "up")]


@pytest.mark.parametrize("args, message", [
    (["up", RAG_ONLY, "2504.99999"], "watcher: unknown paper '2504.99999': not in the database"),
    (["up", RAG_ONLY, "--profile", "nope"], "watcher: no profile named 'nope' (defined: rag, vision)"),
])
def test_rate_with_an_unknown_paper_or_profile_records_nothing(folder, args, message):
    out = watcher(folder, "rate", *args)
    assert (out.returncode, out.stderr.decode().strip()) == (2, message)
    assert listed(folder) == []


def test_saved_exports_bibtex_that_parses_back_and_compiles(folder, tmp_path):
    import bibtexparser

    assert watcher(folder, "rate", "save", BOTH, RAG_ONLY).returncode == 0
    text = watcher(folder, "saved").stdout.decode()
    assert BOTH in text and RAG_ONLY in text
    markdown = watcher(folder, "saved", "--to", "markdown").stdout.decode()
    assert f"](https://arxiv.org/abs/{RAG_ONLY})" in markdown
    as_json = json.loads(watcher(folder, "saved", "--to", "json").stdout)
    assert [p["arxiv_id"] for p in as_json] == [BOTH, RAG_ONLY] and as_json[0]["saved_at"]
    bib = watcher(folder, "saved", "--to", "bibtex").stdout.decode()
    library = bibtexparser.parse_string(bib)
    assert not library.failed_blocks
    entries = {e["eprint"]: e for e in library.entries}
    assert set(entries) == {BOTH, RAG_ONLY}
    assert entries[RAG_ONLY]["archivePrefix"] == "arXiv"
    assert entries[RAG_ONLY]["title"].startswith("{Retrieval Augmented Generation")
    compiles(bib, tmp_path, 2)


def compiles(bib: str, folder, entries: int) -> None:
    """``bib`` goes through pdflatex + bibtex without an error or a BibTeX warning."""
    import bibtexparser

    if not (shutil.which("pdflatex") and shutil.which("bibtex")):
        pytest.skip("no LaTeX here to compile the .bib with")
    (folder / "saved.bib").write_text(bib, encoding="utf-8")
    keys = ",".join(e.key for e in bibtexparser.parse_string(bib).entries)
    (folder / "doc.tex").write_text("\\documentclass{article}\\begin{document}\\nocite{" + keys
                                    + "}\\bibliographystyle{plain}\\bibliography{saved}\\end{document}\n")
    for cmd in (["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc"], ["bibtex", "doc"],
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc"]):
        run = subprocess.run(cmd, cwd=folder, capture_output=True, timeout=60)
        assert run.returncode == 0, run.stdout.decode(errors="replace")[-2000:]
    assert "Warning--" not in (folder / "doc.blg").read_text()
    assert (folder / "doc.bbl").read_text().count("\\bibitem") == entries


def test_bibtex_decodes_arxiv_math_escapes_the_rest_and_compiles(tmp_path):
    import bibtexparser

    from watcher.present.bibtex import read, write

    titles = ["LLM$\\times$MapReduce-V2: Entropy-Driven Scaling", "F$^3$Set: Fast Events",
              "SAEs $\\textit{Can}$ Improve Unlearning", "R&D at 100% of $5 #1 {braces} under_score",
              "Broken $\\frac{a$ math", "Ünïcödé – “quotes” and ∑ sums"]
    papers = [Paper(title=t, arxiv_id=f"2504.0000{i}", authors=["Jürgen Schmidhuber", "Zoë O'Neil"],
                    published=NOW, abstract="50% of {this} & that_") for i, t in enumerate(titles)]
    bib = write(papers)
    # math is decoded to what it says and encoded anew (no TeX of the source is kept)
    assert "LLM{\\texttimes}MapReduce" in bib and "{SAEs Can Improve Unlearning}" in bib
    assert "R{\\&}D at 100{\\%} of {\\$}5 {\\#}1 braces under{\\_}score" in bib
    assert "Broken {\\$}{\\textbackslash}frac{\\textbraceleft}a{\\$} math" in bib  # not LaTeX that parses: kept as text
    assert not bibtexparser.parse_string(bib).failed_blocks
    back = read(bib.encode(), "saved.bib")
    assert [p.arxiv_id for p in back] == [p.arxiv_id for p in papers]
    assert back[0].authors == ["Jürgen Schmidhuber", "Zoë O'Neil"]
    assert back[3].title.startswith("R&D at 100% of $5 #1")
    assert back[0].title.startswith("LLM×MapReduce-V2") and back[5].title.startswith("Ünïcödé – “quotes”")
    compiles(bib, tmp_path, len(papers))


def test_check_lists_the_ratings_of_a_renamed_profile(folder):
    assert watcher(folder, "rate", "up", BOTH, "--profile", "vision").returncode == 0
    (folder / "config.toml").write_text(CONFIG.replace("{vision}", "pictures"))
    out = watcher(folder, "check")
    assert out.returncode == 0, out.stderr
    assert ("ratings of profile 'vision', which is no longer in the config: 1 kept"
            in out.stdout.decode())
    assert [r["profile"] for r in listed(folder)] == ["vision"]  # kept, listed
    text = watcher(folder, "ratings").stdout.decode()
    assert "(profile no longer in the config)" in text


def test_the_ratings_of_a_removed_profile_can_be_cleared(folder):
    assert watcher(folder, "rate", "up", BOTH, "--profile", "vision").returncode == 0
    (folder / "config.toml").write_text(CONFIG.replace("{vision}", "pictures"))
    out = watcher(folder, "rate", "clear", BOTH, "--profile", "vision")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == f"{BOTH}: rating cleared for vision\n"
    assert listed(folder) == []
    assert "no longer in the config" not in watcher(folder, "check").stdout.decode()
    for action in ("up", "clear"):  # a profile with no ratings (any more) stays unknown
        out = watcher(folder, "rate", action, BOTH, "--profile", "vision")
        assert out.returncode == 2 and b"no profile named 'vision'" in out.stderr


# --- learning through the pipeline ---------------------------------------------------------

LIKED = ["2504.05324", "2504.05478", "2504.05731"]  # retrieval-augmented generation, day 1


def day_two(folder, profile: str) -> list[dict]:
    """Day 2 arrives (a real corpus day); the digest of ``profile`` as JSON."""
    shutil.copy(DATA / "corpus-2025-04-10.jsonl.gz", folder / "day.jsonl.gz")
    assert watcher(folder, "fetch").returncode == 0
    config = (folder / "config.toml").read_text()
    if "[digest.mine]" not in config:
        (folder / "config.toml").write_text(config + f"""
[digest.mine]
profiles = ["{profile}"]
every = "1d"
channels = ["out"]
""")
    out = watcher(folder, "digest", "mine", "--dry-run", "--to", "json", "--since", "2025-04-10")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout or "[]")


def test_a_profile_with_only_ratings_learns_from_them(folder):
    config = (folder / "config.toml").read_text()
    (folder / "config.toml").write_text(config + "\n[profile.mine]\ntitle = \"Mine\"\n")
    assert day_two(folder, "mine") == []  # nothing rated yet: nothing to go by
    assert watcher(folder, "rate", "up", *LIKED, "--profile", "mine").returncode == 0
    papers = day_two(folder, "mine")
    assert papers, "the liked papers taught the profile nothing"
    for p in papers:
        assert any(r.startswith("like 2504.05") and r.endswith("(you liked)") for r in p["reasons"])
    assert any("retrieval" in (p["title"] + p["abstract"]).lower() for p in papers)


def test_a_bib_file_of_liked_papers_is_a_cold_start(folder):
    assert watcher(folder, "rate", "save", *LIKED).returncode == 0
    (folder / "mine.bib").write_bytes(watcher(folder, "saved", "--to", "bibtex").stdout)
    config = (folder / "config.toml").read_text()
    (folder / "config.toml").write_text(config + '\n[profile.mine]\nexamples = ["mine.bib"]\n')
    assert watcher(folder, "check").returncode == 0
    papers = day_two(folder, "mine")
    assert papers
    for p in papers:
        assert any(r in {f"similar to {i}" for i in LIKED} for r in p["reasons"]), p["reasons"]


def test_rate_and_explain_by_a_fragment_of_a_title_suggest_the_papers_it_names(folder):
    """A fragment of a title names no paper: the error offers the stored papers whose title
    holds its words, by id, to copy; nothing is recorded."""
    rate = watcher(folder, "rate", "up", "collaborative filtering personalized", "--profile", "rag")
    assert rate.returncode == 2
    said = rate.stderr.decode()
    assert ("unknown paper 'collaborative filtering personalized': no stored paper has this id or whole "
            "title; did you mean: ") in said  # not "not in the database": the papers it may mean are
    assert f"{RAG_ONLY} (Retrieval Augmented Generation with Collaborative" in said, said
    assert listed(folder) == []
    explain = watcher(folder, "explain", "collaborative filtering personalized", "--profile", "rag")
    assert explain.returncode == 2 and f"did you mean: {RAG_ONLY} (" in explain.stderr.decode()
    nothing = watcher(folder, "rate", "up", "zzzz qqqq", "--profile", "rag")
    assert nothing.returncode == 2 and "did you mean" not in nothing.stderr.decode()


def test_ratings_shows_times_in_the_configured_time_zone(folder):
    config = (folder / "config.toml").read_text()
    (folder / "config.toml").write_text(config.replace("[watcher]", '[watcher]\ntimezone = "Asia/Tokyo"', 1))
    assert watcher(folder, "rate", "up", RAG_ONLY, "--profile", "rag").returncode == 0
    line = watcher(folder, "ratings").stdout.decode().splitlines()[0]
    stamp = line.split()[0]
    assert stamp.endswith("+09:00"), line
    stored = listed(folder)[0]["rated_at"]  # the database keeps UTC
    assert not stored.endswith("+09:00")


def test_clear_without_a_profile_takes_the_one_that_holds_the_rating(folder):
    """A paper both profiles select, rated for one: `clear` needs no --profile (QA: it asked
    which of the two, though only one holds a rating); rated for both, it still asks."""
    assert watcher(folder, "rate", "up", BOTH, "--profile", "vision").returncode == 0
    out = watcher(folder, "rate", "clear", BOTH)
    assert out.returncode == 0 and out.stdout.decode() == f"{BOTH}: rating cleared for vision\n", out.stderr
    assert listed(folder) == []
    for name in ("vision", "rag"):
        assert watcher(folder, "rate", "down", BOTH, "--profile", name).returncode == 0
    both = watcher(folder, "rate", "clear", BOTH)
    assert both.returncode == 2 and b"belongs to several profiles" in both.stderr


def test_suggestions_name_what_can_be_given_back(tmp_path):
    """A suggestion is pasted back as it is: a DOI paper by its DOI, a paper with no id by its
    whole title, never a title cut with "…" (QA)."""
    from watcher.services.ratings import suggestions

    long_title = ("Enhancing Player Enjoyment with a Two-Tier DRL and LLM-Based Agent System for "
                  "Fighting Games in Competitive Arcade Settings")
    with Store.open(tmp_path / "w.db") as store:
        store.upsert([Paper(title="Enhancing Gut Microbiome Sampling", doi="10.1038/s41586-025-00001-x"),
                      Paper(title=long_title)], datetime(2025, 4, 12, tzinfo=timezone.utc))
        said = suggestions(store, "enhancing")
        assert "10.1038/s41586-025-00001-x (Enhancing Gut Microbiome Sampling)" in said
        assert repr(long_title) in said and "…" not in said
        for named in ("10.1038/s41586-025-00001-x", long_title):  # each suggestion finds its paper
            assert store.find(named) is not None
