"""The profile query language: syntax, fields, normalisation and errors (table-driven)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conftest import MINIMAL_CONFIG
from helpers import run_cli

from watcher.errors import CARET_WIDTH, ConfigError, QuerySyntaxError
from watcher.matching.index import Batch
from watcher.models import Paper
from watcher.matching.query import And, Not, Or, Term, parse_query
from watcher.util.text import fold, name_key, same_person, words

PAPER = Paper(
    title="GRPO-Style Fine-Tuning of LLMs for Pok\\'emon",
    abstract=(
        "We apply reinforcement learning with verifiable rewards to large language models "
        "(LLMs) and vision-language models. Policies are trained by Blüml's method; "
        "the $Q$-function is reinforced. \\textbf{Chain-of-thought} prompting helps."
    ),
    authors=["Sergey Levine", "Chelsea Finn", "Jürgen Schmidhuber"],
    categories=["cs.LG", "cs.CL"],
)


def matches(query: str, paper: Paper = PAPER) -> bool:
    return 0 in Batch([paper]).evaluate(parse_query(query).root)


@pytest.mark.parametrize("query, expected", [
    # bare words and phrases, whole-word
    ("GRPO", True),
    ("GRP", False),                      # whole words only
    ('"reinforcement learning"', True),
    ('"learning reinforcement"', False),  # phrase order matters
    ('"reinforcement verifiable"', False),  # phrase words must be adjacent
    ("reinforcement verifiable", True),  # juxtaposition is AND, not a phrase
    # operators
    ("GRPO AND PPO", False),
    ("GRPO OR PPO", True),
    ("PPO OR DPO", False),
    ("GRPO ANDNOT survey", True),
    ("GRPO ANDNOT LLM", False),
    ("NOT survey", True),
    ("NOT GRPO", False),
    ("GRPO AND NOT (PPO OR DPO)", True),
    ("(PPO OR GRPO) AND (survey OR LLM)", True),
    ("PPO OR GRPO AND survey", False),   # AND binds tighter than OR ...
    ("GRPO OR PPO AND survey", True),    # ... so this is GRPO OR (PPO AND survey)
    # fields
    ("ti:GRPO", True),
    ("abs:GRPO", False),
    ('abs:"verifiable rewards"', True),
    ('ti:"reinforcement learning"', False),
    ("ti:(PPO OR pokemon)", True),
    ("all:Levine", True),                # all: covers authors too
    ("Levine", True),
    ("au:Levine", True),
    ('au:"S. Levine"', True),
    ("au:levine_s", True),               # arXiv's surname_initial form
    ('au:"T. Levine"', False),
    ("au:Finn AND ti:GRPO", True),
    ("au:GRPO", False),
    ("cat:cs.CL", True),
    ("cat:CS.cl", True),
    ("cat:cs.CV", False),
    ("cat:cs", True),                    # an archive
    ("cat:cs.*", True),
    ("cat:math", False),
    # normalisation
    ("grpo", True),                      # case
    ("fine-tuning", True),               # hyphen = space
    ('"fine tuning"', True),
    ("finetuning", False),               # but not glued
    ("LLM", True),                       # simple plurals both ways
    ("LLMs", True),
    ("policy", True),                    # policies -> policy
    ("reward", True),
    ("pokemon", True),                   # LaTeX accent folded
    ("Pokémon", True),
    ("bluml", True),                     # Unicode accent folded
    ("q-function", True),                # LaTeX math markup dropped
    ('"chain of thought"', True),        # \textbf{...} dropped
    ('"vision language model"', True),
    ("reinforc*", True),                 # wildcard suffix
    ("reinforced", True),
    ("verif*", True),
    ('"reinforc* learning"', True),
    ('"large lang* model"', True),
    ("xyzzy*", False),
])
def test_query_matches(query, expected):
    assert matches(query) is expected


@pytest.mark.parametrize("query, problem, position", [
    ("", "empty query", 0),
    ("   ", "empty query", 0),
    ('GRPO AND "reinforcement learning', "unclosed quote", 9),
    ("(GRPO OR PPO", "( is never closed", 0),
    ("GRPO OR (PPO AND (DPO)", "( is never closed", 8),
    ("GRPO)", "unexpected )", 4),
    ("GRPO AND", "AND needs a term after it", 5),
    ("GRPO OR", "OR needs a term after it", 5),
    ("GRPO ANDNOT", "ANDNOT needs a term after it", 5),
    ("GRPO AND OR PPO", "AND needs a term after it", 5),
    ("AND GRPO", "AND needs a term before it", 0),
    ("OR GRPO", "OR needs a term before it", 0),
    ("GRPO NOT", "NOT needs a term after it", 5),
    ("()", "empty parentheses", 0),
    ('GRPO ""', "empty phrase", 5),
    ("ti:", "ti: needs a word", 0),
    ("GRPO ti: OR PPO", "ti: needs a word", 5),
    ("xx:GRPO", "unknown field xx:", 0),
    ("GRPO AND title:PPO", "unknown field title:", 9),
    ("GRPO or PPO", "operators are upper-case", 5),
    ("GRPO and PPO", "operators are upper-case", 5),
    ("re*", "a wildcard needs at least 3 letters", 0),
    ("*learning", "* can only end a word", 0),
    ("rein*forcement", "* can only end a word", 4),
    ("GRPO $$", "nothing to search for", 5),
    ("au:Lev*", "au: takes a name, not a wildcard", 6),
    ("cat:cs.C*", "cat: takes a category", 4),
    # a web search's minus: folded, it searched for the word it meant to exclude
    ("-survey", "a leading - does not exclude a word here: write NOT survey", 0),
    ("diffusion -survey", "write NOT survey, or quote \"-survey\"", 10),
    ("diffusion ti:-survey", "write NOT ti:survey", 13),
])
def test_syntax_errors_point_at_the_problem(query, problem, position):
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(query)
    err = info.value
    assert problem in err.problem
    assert err.position == position
    assert err.query == query
    assert isinstance(err, ConfigError)
    assert err.caret().splitlines()[1] == " " * position + "^"


@pytest.mark.parametrize("where", ["end", "middle", "start"])
def test_the_caret_of_a_long_one_line_query_stays_in_sight(where):
    """A one-line query (`query = '...'` in config.toml, the web's draft box) of 400 characters
    with the problem at its end: the caret was 400 columns out, past a phone's error box and
    wrapped away from its line on a terminal; now the line is cut around the problem, the caret
    under the character it names."""
    terms = " OR ".join(f'"term number {i}"' for i in range(24))
    query = {"end": terms + " AND (x OR", "middle": terms + " AND (x OR) AND " + terms,
             "start": "(x OR) AND " + terms}[where]
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(query)
    err = info.value
    shown, caret = err.caret().split("\n")
    column = len(caret) - 1
    assert caret == " " * column + "^" and column <= CARET_WIDTH // 2 + 1, caret
    assert len(shown) <= CARET_WIDTH + 2 and len(query) > 2 * CARET_WIDTH
    if err.position < len(query):  # else the caret is just past the line's end, as it was
        assert shown[column] == query[err.position], (shown, caret)
    assert shown.startswith("…") == (where != "start") and shown.endswith("…") == (where != "end")


def test_tree_shape_and_positive_terms():
    q = parse_query('ti:(GRPO OR "policy optimization") ANDNOT ti:survey')
    assert isinstance(q.root, And)
    assert isinstance(q.root.items[0], Or)
    assert isinstance(q.root.items[1], Not)
    assert q.positive_terms() == [
        Term("ti", ("grpo",), "GRPO", 4),
        Term("ti", ("policy", "optimization"), "policy optimization", 13),
    ]
    assert q.positive_terms()[1].display() == 'ti: "policy optimization"'
    assert q.root.items[1].item.syntax() == "ti:survey"


def test_multiline_queries_as_written_in_toml():
    q = parse_query("(\n  GRPO\n  OR PPO\n)\nAND\n(LLM)\n")
    assert matches(q.text)


@pytest.mark.parametrize("text, expected", [
    ("Fine-Tuning LLMs", ["fine", "tuning", "llm"]),
    ("Pok\\'emon Models(LLMs)", ["pokemon", "model", "llm"]),
    ('Schr\\"{o}dinger na\\"ive \\c{c}a', ["schrodinger", "naive", "ca"]),
    ("x \\cdot y", ["x", "y"]),
    ("Jürgen’s policies", ["jurgen", "policy"]),
    ("analysis status bias process gas", ["analysis", "status", "bias", "process", "gas"]),
    # a group's braces join what they touch (arXiv abstracts mark acronyms so; BibTeX accents)
    ("\\textbf{Di}ffusion \\textbf{T}ransformer", ["diffusion", "transformer"]),
    ('J. M{\\"u}ller and {\\em Very} good', ["j", "muller", "and", "very", "good"]),
])
def test_words(text, expected):
    assert words(text) == expected


def test_fold_is_lower_ascii():
    assert fold("Ünïcode O'Brien Jürgen’s") == "unicode obrien jurgens"


@pytest.mark.parametrize("wanted, actual, same", [
    ("S. Levine", "Sergey Levine", True),
    ("Sergey Levine", "S. Levine", True),
    ("sergey levine", "Sergey LEVINE", True),
    ("Levine", "Sergey Levine", True),
    ("Levine, Sergey", "Sergey Levine", True),
    ("Sergei Levine", "Sergey Levine", False),
    ("T. Levine", "Sergey Levine", False),
    ("S. Levin", "Sergey Levine", False),
    ("Jurgen Schmidhuber", "Jürgen Schmidhuber", True),
    ("J. Schmidhuber", "J\\\"{u}rgen Schmidhuber", True),
    ("Yoshua Bengio", "Samy Bengio", False),
])
def test_author_names(wanted, actual, same):
    assert same_person(name_key(wanted), name_key(actual)) is same


DEEP = [("(" * 250 + "GRPO" + ")" * 250, "(" * 50, 50),
        ("NOT " * 700 + "GRPO", "NOT " * 50, 200),
        ("(NOT " * 30 + "GRPO" + ")" * 30, "(NOT " * 25, 125)]


@pytest.mark.parametrize("query, before, position", DEEP, ids=["parens", "nots", "mixed"])
def test_too_deep_nesting_is_a_syntax_error_at_the_first_level_too_many(query, before, position):
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(query)
    assert "nested too deeply (at most 50" in info.value.problem
    assert info.value.position == position == len(before)


@pytest.mark.parametrize("query", [
    "(" * 50 + "GRPO" + ")" * 50,
    "NOT " * 49 + "GRPO",
    "x " + "(a OR b ANDNOT " * 50 + "GRPO" + ")" * 50,  # the deepest tree per level: Or, And, Not
    "(GRPO OR NOT " * 25 + "x" + ")" * 25,
])
def test_every_accepted_depth_evaluates_everywhere(query, tmp_path):
    """The matchers, the percolator's anchors and the web search walk the whole tree: any
    query the parser accepts must not exhaust their stack."""
    from watcher.matching.percolate import anchors
    from watcher.services.search import Filters, run_search
    from watcher.store import Store

    q = parse_query(query)
    Batch([PAPER]).evaluate(q.root)
    q.positive_terms()
    anchors(q.root, lambda term: 0.5)
    with Store.open(tmp_path / "w.db") as store:
        store.upsert([PAPER], datetime.now(timezone.utc))
        run_search(store, q, Filters())


def test_check_refuses_a_too_deep_profile_query_with_the_caret(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG.replace(
        "query = '\"reinforcement learning\" OR RLHF OR GRPO'", "query = '" + "NOT " * 700 + "GRPO'"))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "nested too deeply" in err and "profile.llm-rl.query" in err
    shown, caret = err.splitlines()[-2:]  # the 2,800-character line, cut around the problem (column 200)
    assert shown.startswith("…T NOT NOT") and shown.endswith("…") and caret == " " * 31 + "^" and "Traceback" not in err


@pytest.mark.parametrize("query", ["(" * 250 + "GRPO" + ")" * 250, "NOT " * 400 + "GRPO",  # within the 2,000 characters
                                   "x " + "(a OR b ANDNOT " * 10 + "GRPO" + ")" * 10,
                                   "x " + "(a OR b ANDNOT " * 50 + "GRPO" + ")" * 50])
def test_the_web_search_answers_any_depth_without_a_500(tmp_path, query):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from webkit import app_for, sample_setup

    config, db = sample_setup(tmp_path)
    with TestClient(app_for(config, db)) as client:
        r = client.get("/search", params={"q": query})
    if query.startswith("x ") and query.count("(") == 10:  # accepted: searched, not narrowed by FTS5
        assert r.status_code == 200
    elif query.startswith("x "):  # 102 terms: more than a search may have
        assert r.status_code == 400 and "at most 32" in r.text and '<pre class="caret">' in r.text
    else:
        assert r.status_code == 400 and "nested too deeply" in r.text and '<pre class="caret">' in r.text
