"""The objects that pass between stages: Paper, Match and Digest.

A :class:`Paper` is one paper as one listing saw it. Its identity (:attr:`Paper.key`) is the
arXiv id without version when known, else its first DOI (lower case), else its PubMed id, else
a fingerprint of its normalised title (with the first author's surname and day, so that two
papers of one common title keep two keys), so that the same paper from an id-less text listing
and from arXiv merge into one row of the store. Any DOI or PMID in common also makes two
listings one work (:meth:`Paper.identifiers`: a bioRxiv preprint, its journal version, its
PubMed record); see :mod:`watcher.identity` for when a title alone does not.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timezone

from .util.text import name_key

# New-style ids (0704.0001 .. 2504.07615, 5-digit since 2015) and old-style (astro-ph/0601001,
# math.GT/0309136), each optionally followed by a version.
_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = r"[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}"
ARXIV_ID_RE = re.compile(rf"(?<![\w./-])(?P<id>{_NEW_ID}|{_OLD_ID})(?:v(?P<v>\d{{1,6}}))?(?![\w.])")

_URL_PREFIX = re.compile(r"^(?:https?://)?(?:[a-z]+\.)?arxiv\.org/(?:abs|pdf)/", re.I)


def parse_arxiv_id(text: str | None) -> tuple[str, int | None] | None:
    """Find an arXiv id in ``text`` (a bare id, ``arXiv:…``, an abs/pdf URL or an OAI identifier).

    Returns ``(id_without_version, version_or_None)`` or None when there is no id.

    >>> parse_arxiv_id("http://arxiv.org/abs/2104.12255v1")
    ('2104.12255', 1)
    >>> parse_arxiv_id("oai:arXiv.org:astro-ph/0601001")
    ('astro-ph/0601001', None)
    """
    if not text:
        return None
    text = _URL_PREFIX.sub("", text.strip(), count=1)
    for prefix in ("oai:arXiv.org:", "arXiv:", "arxiv:"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    m = ARXIV_ID_RE.search(text)
    if not m:
        return None
    return m.group("id"), int(m.group("v")) if m.group("v") else None


# C0 controls except tab and line breaks (the formats fold those), DEL and the C1 controls
# (mis-decoded cp1252 at best; Python counts some of them as line breaks or spaces), and the
# bidirectional embedding / override / isolate controls, with which a title could reverse
# how the text after it is displayed ("Trojan Source" spoofing).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str) -> str:
    """``text`` without control characters (tab and line breaks stay); readers test a title
    for emptiness after this, since a Paper cleans its title, abstract and authors with it."""
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


_TITLE_DROP = re.compile(r"\\[a-zA-Z]+|[^\w\s]|_")


_SHORT_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9./-]*")  # arXiv ids, old-style ones too


def short_key(key: str) -> str:
    """A paper key as links carry it: an arXiv id as it is, a ``title:…`` key (a paper without
    an id, often 150 characters and more) as ``h.`` and 11 characters of its SHA-256
    (:meth:`watcher.store.Store.get_short` finds the paper again)."""
    import base64
    import hashlib

    if _SHORT_PLAIN.fullmatch(key):
        return key
    return "h." + base64.urlsafe_b64encode(hashlib.sha256(key.encode("utf-8")).digest()[:8]).decode("ascii").rstrip("=")


def title_fingerprint(title: str) -> str:
    """A title reduced to lower-case ASCII words: accents, LaTeX commands, punctuation and
    spacing differences between listings of the same paper vanish."""
    text = title
    if not text.isascii():  # ASCII has no decompositions and no combining marks
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    text = _TITLE_DROP.sub(" ", text.lower())
    return " ".join(text.split())


_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)
_DOI_RE = re.compile(r"10\.\d{4,9}/\S+")


def better_spelt(a: str, b: str) -> str:
    """Of two spellings of one name ("Nature neuroscience", in sentence case as NLM writes it,
    and "Nature Neuroscience"), the one with more capitals, then the greater: no order of the
    two changes the choice (a tie keeps ``a``)."""
    return max((a, b), key=lambda v: (sum(c.isupper() for c in v), v))


def _preprint_servers() -> tuple[tuple[str, ...], frozenset[str]]:
    """The DOI prefixes of preprint servers and the servers' names (folded), from
    ``data/preprint_doi_prefixes.txt`` (one prefix a line, then the servers' names, a note in
    parentheses; ``#`` lines are comments): bioRxiv and medRxiv (both of their prefixes),
    arXiv, ChemRxiv, OSF preprints, Research Square, Preprints.org, SSRN."""
    from importlib.resources import files

    text = files("watcher").joinpath("data/preprint_doi_prefixes.txt").read_text(encoding="utf-8")
    rows = [line.split(None, 1) for line in text.splitlines() if line.strip() and not line.startswith("#")]
    names = {title_fingerprint(n) for _, servers in rows for n in servers.split("(")[0].split(",") if n.strip()}
    return tuple(prefix for prefix, _ in rows), frozenset(names)


# Any DOI under another prefix is taken for a journal's; a venue of another name for a journal.
PREPRINT_DOI_PREFIXES, PREPRINT_SERVERS = _preprint_servers()


def normalize_doi(text: str | None) -> str | None:
    """A DOI in one spelling: lower case, without ``https://doi.org/`` or ``doi:``; None when
    ``text`` holds no DOI (``10.`` prefix, a slash, a suffix).

    >>> normalize_doi("https://doi.org/10.1038/S41586-024-07000-1")
    '10.1038/s41586-024-07000-1'
    """
    if not text:
        return None
    m = _DOI_RE.search(_DOI_PREFIX.sub("", clean_text(text).strip()))
    if not m:
        return None
    # no registered DOI has an empty, "." or ".." segment, and one would be a path out of a
    # folder wherever the DOI names a file or a URL path (the static site's pages)
    if any(segment in ("", ".", "..") for segment in re.split(r"[/\\]", m.group())[1:]):
        return None
    return m.group().rstrip(".,;").lower()


def is_preprint_doi(doi: str) -> bool:
    """Whether ``doi`` (normalised) was registered by a preprint server."""
    return doi.startswith(PREPRINT_DOI_PREFIXES)


def surnames(authors: list[str]) -> set[str]:
    """The folded surnames of ``authors`` (``"S. Levine"`` and ``"Levine, Sergey"`` give
    ``levine``), for telling apart two papers of one title."""
    return {k[0] for a in authors if isinstance(a, str) and (k := name_key(a))}


def now_utc() -> datetime:
    """The wall clock, aware UTC: the one place watcher reads it (everything else is handed
    the time, so tests and the daemon's benchmark can set it)."""
    return datetime.now(timezone.utc)


def utc(dt: datetime | None) -> datetime | None:
    """``dt`` as an aware UTC datetime (naive values are taken to be UTC already)."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def parse_iso(value: object) -> datetime | None:
    """An ISO 8601 timestamp (``Z`` allowed) as an aware UTC datetime; None when ``value`` is
    empty, not a string, or not a timestamp (naive values are taken to be UTC)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


MAX_FIELD = 2_000  # characters of a title, a name, a comment, a journal (real ones: a few hundred)
MAX_ABSTRACT = 50_000  # characters of an abstract (a journal's longest: about 30,000)
MAX_AUTHORS = 3_000  # names kept (ATLAS and CMS papers have about 3,000); author_count says how many
MAX_LIST = 200  # categories, keywords, DOIs, venues, sources, citations of one paper
# An identifier is kept whole or not at all: a cut DOI or URL would name another work (or
# none), so one longer than these is dropped with a warning, never shortened.
MAX_ID = 500  # characters of a DOI (as given, with any https://doi.org/), PMID, PMCID, arXiv id,
#               category (registered DOIs are under 300 characters; the others under 40)
MAX_URL = 2_000  # characters of a paper's URL or code repository (browsers' own limit)
_IDS = (("arxiv_id", MAX_ID), ("doi", MAX_ID), ("pmid", MAX_ID), ("pmcid", MAX_ID),
        ("primary_category", MAX_ID), ("announce_type", MAX_ID), ("source", MAX_ID),
        ("url", MAX_URL), ("github_repo", MAX_URL))
_ID_LISTS = (("dois", MAX_ID), ("categories", MAX_ID), ("sources", MAX_ID), ("cites", MAX_FIELD),
             ("followed", MAX_FIELD), ("venues", MAX_FIELD), ("ai_keywords", MAX_FIELD))


@dataclass(slots=True, kw_only=True)
class Paper:
    """One paper as a listing reports it. Unknown values are None (or empty lists).

    ``published`` is the first-version submission time and ``updated`` the latest version's,
    both aware UTC datetimes; ``announced`` is the day a listing (RSS, HF Daily Papers, a digest)
    put it out, which can be later than ``published``.
    """

    title: str
    arxiv_id: str | None = None
    version: int | None = None
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    published: datetime | None = None
    updated: datetime | None = None
    categories: list[str] = field(default_factory=list)
    primary_category: str | None = None
    comment: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    url: str | None = None
    announce_type: str | None = None
    upvotes: int | None = None
    source: str | None = None
    announced: date | None = None
    author_count: int | None = None
    organization: str | None = None
    github_repo: str | None = None
    ai_keywords: list[str] = field(default_factory=list)
    dois: list[str] = field(default_factory=list)
    pmid: str | None = None
    pmcid: str | None = None
    journal: str | None = None
    venues: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    # followed works this one cites and followed authors who wrote it (docs/openalex.md), each as
    # "key|title" / "key|name" (see watcher.formats.openalex: cite_entry, cited)
    cites: list[str] = field(default_factory=list)
    followed: list[str] = field(default_factory=list)
    # where each merged field's value came from and how good it is ("pubmed:list",
    # "feed:split", "feed:channel" ...): watcher.identity's merge policy and `watcher explain`
    origins: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._bound()
        # Untrusted text: control characters (NUL, ESC, ...) carry no meaning in a title, an
        # abstract or a name, and a NUL would make a written text digest unreadable ("binary").
        # The same for every free-text field a page or a digest shows (a comment, a journal
        # reference, a DOI reversed by a direction override would mislead the reader).
        for name in ("title", "abstract", "comment", "journal_ref", "journal"):
            value = getattr(self, name)
            if isinstance(value, str) and _CONTROL.search(value):
                setattr(self, name, clean_text(value))
        # Counts SQLite can store (a listing's upvotes of 2**63 crashed the store); others unknown.
        for name in ("version", "upvotes", "author_count"):
            value = getattr(self, name)
            if isinstance(value, int) and not 0 <= value < 2**31:
                setattr(self, name, None)
        if any(_CONTROL.search(a) for a in self.authors if isinstance(a, str)):
            self.authors = [clean_text(a) if isinstance(a, str) else a for a in self.authors]
        # DOIs are case-insensitive: one spelling, lower case, every DOI of the work in dois
        doi = normalize_doi(self.doi) if isinstance(self.doi, str) else None
        self.doi = doi
        if self.dois or doi:
            dois = [d for d in (normalize_doi(x) for x in self.dois if isinstance(x, str)) if d]
            self.dois = list(dict.fromkeys(dois + ([doi] if doi else [])))
        if self.source and not self.sources:
            self.sources = [self.source]
        if self.pmid is not None:  # a PubMed id is a number; anything else is not one
            self.pmid = str(self.pmid).strip() or None
            if self.pmid is not None and not (self.pmid.isascii() and self.pmid.isdigit()):
                self.pmid = None

    def _bound(self) -> None:
        """One paper is bounded whatever a listing says (5.9 million authors made a 60 MB
        digest and a page that took 14 s): each text field, each list, the authors kept (the
        first MAX_AUTHORS names, ``author_count`` saying how many there are)."""
        for name, most in (("title", MAX_FIELD), ("comment", MAX_FIELD), ("journal_ref", MAX_FIELD),
                           ("journal", MAX_FIELD), ("organization", MAX_FIELD), ("abstract", MAX_ABSTRACT)):
            value = getattr(self, name)
            if isinstance(value, str) and len(value) > most:
                setattr(self, name, value[:most - 1] + "…")
        if len(self.authors) > MAX_AUTHORS:
            if not isinstance(self.author_count, int) or self.author_count < len(self.authors):
                self.author_count = len(self.authors)
            self.authors = self.authors[:MAX_AUTHORS]
        if any(isinstance(a, str) and len(a) > MAX_FIELD for a in self.authors):
            self.authors = [a[:MAX_FIELD] if isinstance(a, str) else a for a in self.authors]
        for name in ("categories", "ai_keywords", "dois", "venues", "sources", "cites", "followed"):
            value = getattr(self, name)
            if len(value) > MAX_LIST:
                setattr(self, name, value[:MAX_LIST])
        self._bound_ids()

    def _bound_ids(self) -> None:
        """Drop each identifier longer than its bound (:data:`MAX_ID`, :data:`MAX_URL`), and
        each such entry of a list of them, saying so in one warning: cutting one would make a
        wrong identity (two papers merged by a cut DOI), dropping it only a paper known by its
        other identifiers or its title."""
        dropped = []
        for name, most in _IDS:
            value = getattr(self, name)
            if isinstance(value, str) and len(value) > most:
                setattr(self, name, None)
                dropped.append(f"its {name} of {len(value):,} characters")
        for name, most in _ID_LISTS:
            value = getattr(self, name)
            kept = [v for v in value if not (isinstance(v, str) and len(v) > most)]
            if len(kept) < len(value):
                setattr(self, name, kept)
                dropped.append(f"{len(value) - len(kept)} of its {name} (longer than {most:,} characters)")
        if dropped:
            title = self.title if isinstance(self.title, str) else ""
            logging.getLogger("watcher").warning(
                "paper %r: dropped %s: an identifier is kept whole or not at all (at most %s "
                "characters, a URL %s)", title[:80], ", ".join(dropped), f"{MAX_ID:,}", f"{MAX_URL:,}")

    @property
    def key(self) -> str:
        """The paper's identity across sources and versions: the arXiv id, else ``doi:`` and
        the first DOI known of it, else ``pmid:`` and its PubMed id, else ``title:`` and the
        title fingerprint, then (when known) the first author's surname and the first
        version's day, so that two papers of one common title keep two keys."""
        if self.arxiv_id:
            return self.arxiv_id
        if self.dois:
            return "doi:" + self.dois[0]
        if self.pmid:
            return "pmid:" + self.pmid
        key = "title:" + title_fingerprint(self.title)
        first = surnames(self.authors[:1])
        if first:
            key += "|" + next(iter(first))
        if self.published:
            key += "|" + self.published.date().isoformat()
        return key

    def identifiers(self) -> list[str]:
        """Every identifier that makes two listings one work (docs/design.md): ``doi:…`` for each DOI
        (a preprint's and its journal version's) and ``pmid:…``; the arXiv id is the key."""
        out = ["doi:" + d for d in self.dois]
        if self.pmid:
            out.append("pmid:" + self.pmid)
        return out

    @property
    def journal_doi(self) -> str | None:
        """The first DOI of the work that no preprint server registered: its journal version."""
        return next((d for d in self.dois if not is_preprint_doi(d)), None)

    @property
    def publication(self) -> str | None:
        """Where the work was published, as updates say it: ``published in Nature``
        (the journal, else an arXiv journal reference), else ``published as doi:…`` when only
        the journal version's DOI is known; None for a preprint."""
        if self.journal or self.journal_ref:
            return f"published in {self.journal or self.journal_ref}"
        if self.journal_doi:
            return f"published as doi:{self.journal_doi}"
        return None

    @property
    def venue(self) -> str | None:
        """The journal that published the work, else the preprint server that announced it
        (``arXiv`` for an arXiv id)."""
        if self.journal:
            return self.journal
        if self.venues:
            return self.venues[0]
        return "arXiv" if self.arxiv_id else None

    @property
    def appeared_in(self) -> list[str]:
        """Every venue the work appeared in, preprint servers first (``arXiv`` first for an
        arXiv id), then journals, each kind first seen first (the journal last when no listing
        named it among the venues), each once whatever its case and punctuation: ``bioRxiv →
        Nature Neuroscience`` whichever was fetched first; what digests and pages show, unless
        it is arXiv alone."""
        out = (["arXiv"] if self.arxiv_id else []) + list(self.venues)
        if self.journal:
            out.append(self.journal)
        spelt: dict[str, str] = {}  # "Nature neuroscience" (sentence case) is "Nature Neuroscience": once,
        for v in filter(None, out):  # better spelt, at its first place
            f = title_fingerprint(v)
            spelt[f] = better_spelt(spelt[f], v) if f in spelt else v
        return sorted(spelt.values(), key=lambda v: title_fingerprint(v) not in PREPRINT_SERVERS)  # stable

    @property
    def doi_url(self) -> str | None:
        """``https://doi.org/…`` of the DOI to cite, when known."""
        return f"https://doi.org/{self.doi}" if self.doi else None

    @property
    def fingerprint(self) -> str:
        """The normalised title (see :func:`title_fingerprint`)."""
        return title_fingerprint(self.title)

    @property
    def abs_url(self) -> str | None:
        """The arXiv abstract page, else whatever link the listing gave, else the DOI's."""
        if self.arxiv_id:
            return f"https://arxiv.org/abs/{self.arxiv_id}"
        return self.url or self.doi_url

    @property
    def pdf_url(self) -> str | None:
        """The arXiv PDF link when the arXiv id is known."""
        return f"https://arxiv.org/pdf/{self.arxiv_id}" if self.arxiv_id else None

    @property
    def day(self) -> date | None:
        """The date a digest files this paper under: when it was announced, else submitted."""
        if self.announced:
            return self.announced
        return self.published.date() if self.published else None

    @property
    def entry_date(self) -> datetime | None:
        """The time a text digest entry carries on its ``Date:`` line (aware UTC): the first
        version's submission time when a source gave it, else the day the paper was announced
        (an arXiv RSS feed or daily listing, the day it went on Hugging Face Daily Papers) at
        00:00 UTC; None only when no date at all is known."""
        if self.published is not None:
            return self.published
        if self.announced is not None:
            return datetime(self.announced.year, self.announced.month, self.announced.day,
                            tzinfo=timezone.utc)
        return None

    def to_json(self) -> dict:
        """The JSON object of ``--to json`` (docs/formats.md): datetimes in ISO 8601 UTC, and the
        ``venue`` (:attr:`venue`); ``origins`` is the store's bookkeeping, not part of it."""
        out = {}
        for f in fields(self):
            if f.name == "origins":
                continue
            value = getattr(self, f.name)
            if isinstance(value, (datetime, date)):
                value = value.isoformat().replace("+00:00", "Z")
            out[f.name] = value
        out["venue"] = self.venue
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Paper":
        """The inverse of :meth:`to_json` (unknown keys are ignored)."""
        kwargs = {}
        names = {f.name for f in fields(cls)}
        for name, value in data.items():
            if name not in names:
                continue
            if name in ("published", "updated"):
                value = parse_iso(value)
            elif name == "announced":
                value = date.fromisoformat(value[:10]) if value else None
            kwargs[name] = value
        return cls(**kwargs)


@dataclass(slots=True)
class Match:
    """A paper that a profile selected, with its score and the human-readable reasons.

    ``tldr`` is the one-sentence summary the pipeline computed before rendering (docs/channels.md);
    when it is None, renderers use the extractive one (:func:`watcher.present.tldr.tldr_of`).

    A match read back from a delivered message (:meth:`watcher.store.Store.issue`, docs/record.md)
    holds the paper as sent; ``as_sent`` is False for one recorded before messages kept their
    papers (the paper as stored now), and ``since`` is the paper as stored now when it changed
    after the message (a new version, a journal's title)."""

    paper: Paper
    score: float
    reasons: list[str]
    profile: str
    tldr: str | None = None
    as_sent: bool = True
    since: Paper | None = None


@dataclass(frozen=True, slots=True)
class ProfileCount:
    """How many of a digest's new papers one of its profiles brought (a paper counts for the
    profile that selected it, :attr:`Match.profile`)."""

    name: str
    title: str
    papers: int


@dataclass(slots=True)
class Digest:
    """What a renderer needs: the header, the papers in order, and why it may be empty.

    ``matches`` are new papers, best profile first then newest first; ``updated`` are revised
    versions of papers already delivered (rich formats may list them); ``overflow`` are papers
    a size limit pushed out of the full listing (rendered as titles with links).
    """

    name: str
    title: str
    date: date
    matches: list[Match] = field(default_factory=list)
    updated: list[Match] = field(default_factory=list)
    empty_reason: str | None = None
    links: object | None = None  # watcher.present.links.Links: rating links, when [web] has them
    profiles: list[ProfileCount] = field(default_factory=list)  # per profile, in config order

    @property
    def per_profile(self) -> list[ProfileCount]:
        """The papers per profile when the digest has several profiles (with one, its count
        is the digest's): what headers and subjects show beside the total."""
        return self.profiles if len(self.profiles) > 1 else []

    @property
    def papers(self) -> list[Paper]:
        """The new papers, in digest order."""
        return [m.paper for m in self.matches]


@dataclass
class Sent:
    """What a channel showed of a digest when a size limit cut it (the e-mail's budget):
    ``titles_only``, the keys of papers listed as a title with a link instead of in full, and
    ``parts``, the number of messages it was split into (None: one message)."""

    titles_only: set[str] = field(default_factory=set)
    parts: int | None = None


def reason_label(paper: Paper) -> str:
    """A paper as reasons name it: its arXiv id, else its quoted, shortened title."""
    if paper.arxiv_id:
        return paper.arxiv_id
    title = paper.title if len(paper.title) <= 50 else paper.title[:47] + "..."
    return f'"{title}"'


def unique_papers(papers) -> list[Paper]:
    """``papers`` without repeats (by key), in order: a paper given twice counts once."""
    seen: set = set()
    out = []
    for p in papers:
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out
