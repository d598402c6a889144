"""What publishers write in their tables of contents, as declared rules (data, no code paths):
:mod:`watcher.formats.journal_feed` applies them to every RSS / Atom feed it reads.

Each rule names the publishers it was written from (``tests/data/journals/`` holds a real
feed of each, with the papers it must read to). A rule that does not match changes nothing, so
the rules apply to every feed; none needs to know which publisher served it.

- :data:`CHANNEL_TITLES`: a channel title with decorations around the journal's name
  ("ScienceDirect Publication: X", "Wiley: X: Table of Contents", "X Current Issue",
  "X: Most Recent Articles", "Latest Articles from X", "Latest Issue of X RSS Feed"); the group
  ``name`` is the journal.
- :data:`SEARCH_CHANNELS`: feeds whose channel title is a search query, not a journal (PubMed's
  search RSS): their items' own ``dc:source`` names the journal, the channel title never does.
- :data:`BOILERPLATE`: citation lines publishers put in an item's description, around or
  instead of the abstract. A pattern's ``authors`` / ``doi`` / ``published`` groups are read
  (ScienceDirect and Pensoft give the authors, DOI and date only there), its ``abstract`` group is the abstract (absent:
  the description holds no abstract at all).
- :data:`ABSTRACT_PREFIXES`: a heading before the abstract ("Abstract", "ABSTRACT", "Summary").
- :data:`AUTHOR_LIST`: how one string of several authors is split ("A, B and C",
  "Brandão S, Saeedi H, Brandt A.", "… et al.").
"""

from __future__ import annotations

import re

_I = re.I | re.S

CHANNEL_TITLES: list[tuple[str, re.Pattern]] = [
    ("Elsevier ScienceDirect", re.compile(r"^ScienceDirect Publication:\s*(?P<name>.+)$", _I)),
    # Atypon's Literatum (Wiley, Taylor & Francis, AAAS, SAGE …): "Wiley: TAXON: Table of Contents"
    ("Atypon (Wiley, T&F)", re.compile(r"^[\w&.' -]{2,40}:\s*(?P<name>.+?):\s*Table of Contents$", _I)),
    ("Oxford Academic", re.compile(r"^(?P<name>.+?)\s+(?:Current Issue|Advance Articles?)$", _I)),
    ("Microbiology Society", re.compile(r"^(?P<name>.+?):\s*(?:Most Recent|Latest) Articles$", _I)),
    ("Pensoft", re.compile(r"^Latest(?: \d+)? Articles from\s+(?P<name>.+)$", _I)),
    ("Ingenta Connect", re.compile(r"^Latest Issue of\s+(?P<name>.+?)(?:\s+RSS Feed)?$", _I)),
    ("Nature", re.compile(r"^(?P<name>.+?)\s*[-:–]\s*nature\.com (?:science|subject) feeds$", _I)),
    ("bioRxiv / medRxiv", re.compile(r"^(?P<name>bioRxiv|medRxiv) Subject Collection:\s*.+$", _I)),
]

SEARCH_CHANNELS: list[tuple[str, re.Pattern]] = [
    ("PubMed search RSS", re.compile(r"pubmed\.ncbi\.nlm\.nih\.gov/rss|PubMed RSS feeds", re.I)),
]

BOILERPLATE: list[tuple[str, re.Pattern]] = [
    # "Publication date: February 2022 Source: Molecular Phylogenetics and Evolution, Volume 167
    # Author(s): David R. Bickel" (the whole description; no abstract; "Available online 16
    # December 2021" for an article in press)
    ("Elsevier ScienceDirect", re.compile(
        r"^Publication date:\s*(?:Available online\s*)?(?P<published>(?:\d{1,2}\s+)?[A-Z][a-z]+\s+\d{4})?"
        r".*?Source:.*?(?:Author\(s\):\s*(?P<authors>.+?))?\s*$", _I)),
    # "Volume 67, Issue 4, December 2021, Page 283-289. ." (Taylor & Francis; no abstract)
    ("Taylor & Francis", re.compile(
        r"^Volume \d+,\s*Issue [\w-]+,\s*[\w ]*\d{4},\s*Pages? [\w-]+\s*[. ]*\s*(?P<abstract>.*)$", _I)),
    # "PhytoKeys 185: 99-116 DOI: 10.3897/… Authors: A, B Abstract: … HTML XML PDF" (Pensoft)
    ("Pensoft", re.compile(
        r"^.{0,120}?\d+:\s*[\w-]+\s+DOI:\s*(?P<doi>10\.\d{4,9}/\S+)\s+Authors:\s*(?P<authors>.+?)"
        r"\s+Abstract:\s*(?P<abstract>.*?)\s*(?:HTML\s*)?(?:XML\s*)?(?:PDF\s*)?$", _I)),
    # PubMed RSS content: "Parasitol Int. 2021 Dec 17:102531. doi: 10.1016/…. Online ahead of
    # print. ABSTRACT … PMID:34929406 | DOI:10.1016/…"
    ("PubMed search RSS", re.compile(
        r"^.{0,300}?\bdoi:\s*10\.\d{4,9}/\S+?\.(?=\s)(?:\s*(?:Online ahead of print|eCollection [^.]*|"
        r"Epub [^.]*)\.)*\s*(?:ABSTRACT\s*)?(?P<abstract>.*?)\s*PMID:\s*\d+(?:\s*\|.*)?$", _I)),
    # Wiley's plain description of an item: "TAXON, EarlyView." (its abstract is elsewhere)
    ("Wiley", re.compile(r"^[^.]{1,80},\s*EarlyView\.?$", _I)),
    # Nature: "Nature Neuroscience, Published online: 25 November 2026; doi:10.1038/…" then the
    # abstract (often only the title again)
    ("Nature", re.compile(r"^[^.]{0,160}?doi:\s*(?P<doi>10\.\d{4,9}/\S+)\s*(?P<abstract>.*)$", _I)),
]

ABSTRACT_PREFIXES = re.compile(r"^(?:Abstract|ABSTRACT|Summary|SUMMARY)\s*[:.]?\s+")

# One string of several authors: "et al." at its end means the list is cut short.
AUTHOR_LIST = {
    "truncated": re.compile(r",?\s*(?:et al\.?|and others|…|\.\.\.)\s*$", re.I),
    # "A, B and C", "A, B, & C", "A; B; C" (commas only when every part is a whole name)
    "separators": re.compile(r"\s*;\s*|\s*,\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+"),
    # "Brandão S", "De Miranda G", "Saeedi H." (PubMed's / Oxford Academic's surname-initials)
    "surname_initials": re.compile(r"^(?P<surname>\S.*?)\s+(?P<initials>[A-Z]{1,3})\.?$"),
    # "Kukla, D., Crampton, A., Wood, D." (bioRxiv / medRxiv RSS: surname, initials, in pairs)
    "inverted_pairs": re.compile(r"^(?:[^,]+,\s*(?:[A-Z][\w'-]*\.\s*)+(?:,\s*|$))+$"),
    "pair": re.compile(r"(?P<surname>[^,]+),\s*(?P<given>(?:[A-Z][\w'-]*\.\s*)+)(?:,|$)"),
    # "Inoda, Toshio", "Castañeda-Ruiz, Rafael F." (Cambridge, Ingenta: one creator per person)
    "inverted": re.compile(r"^(?P<surname>[^,]+),\s*(?P<given>[^,]+)$"),
}
