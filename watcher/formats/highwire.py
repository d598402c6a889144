"""The markers bioRxiv's and medRxiv's details API leaves in an abstract, read as what they stand
for. Pure: text in, text out.

The API flattens the abstract's JATS into text with HighWire's markers in it, and glues a
section's heading to its first sentence::

    BackgroundThe modified Blalock-Taussig-Thomas shunt …
    Abstract/SummaryO_ST_ABSBackgroundC_ST_ABSCollaborative research programs …
    HighlightsO_LIA unified deep learning framework …\\nC_LIO_LISuperior performance …\\nC_LI
    AO_SCPLOWBSTRACTC_SCPLOWManual annotation …   (small caps: "Abstract")
    Cohens O_SCPLOWKC_SCPLOWO_SCPCAP.C_SCPCAP …     (small caps and capitals: "k.")
    normalized WSR ({rho} = 0.94, …                  (a character by its name: "ρ")
    Graphical AbstractO_FIG O_LINKSMALLFIG WIDTH=200 … M_FIG C_FIG

:func:`abstract_text` reads them so: a heading is written ``Heading: text`` (as a PubMed
abstract's labelled sections are), a list item ``• item``, small caps as the plain word, a
figure or table block (and a heading that only announced it) not at all, a character the API
writes by its name in braces (a Greek letter, ``{middle dot}``) as the character. Paragraphs are joined
by one space, as every abstract watcher keeps is one line.
"""

from __future__ import annotations

import re
import unicodedata

# what a heading glued to its paragraph's first word may be (as the servers' abstracts write
# them); only at a paragraph's start and only before a capital, so that a word in a sentence is
# never cut
HEADINGS = (
    "Abstract", "Background", "Backgrounds", "Introduction", "Context", "Rationale", "Motivation",
    "Importance", "Significance", "Objective", "Objectives", "Aim", "Aims", "Purpose", "Question",
    "Hypothesis", "Design", "Setting", "Settings", "Participants", "Population", "Exposure",
    "Exposures", "Interventions", "Intervention", "Method", "Methods", "Methodology",
    "Materials and Methods", "Methods and Findings", "Main Outcomes and Measures",
    "Main outcome measures", "Measurements", "Analysis", "Result", "Results", "Findings",
    "Interpretation", "Discussion", "Limitations", "Conclusion", "Conclusions",
    "Conclusions and Relevance", "Implications", "Summary", "Highlights", "Key points",
    "Key Points", "Key messages", "Key Messages", "Funding", "Trial registration",
    "Availability and implementation", "Contact", "Supplementary information",
    "Evidence before this study", "Added value of this study",
    "Implications of all the available evidence", "Research in context", "Author summary",
    "Graphical abstract", "Graphical Abstract", "Structured abstract", "Abstract/Summary",
)
_GLUED = re.compile(r"(?m)^(" + "|".join(sorted(map(re.escape, HEADINGS), key=len, reverse=True))
                    + r")(?=[A-Z][a-z]|[A-Z]\b|[0-9])")
_ALONE = re.compile(r"(?m)^[ \t]*(" + "|".join(sorted(map(re.escape, HEADINGS), key=len, reverse=True))
                    + r")[ \t]*\n")
_TITLE = re.compile(r"^\s*(?:Abstract/Summary|Structured abstract|Abstract)\b:?\s*(?=\S)")
_SMALL_CAPS = re.compile(r"O_SCP(LOW|CAP)(.*?)C_SCP\1", re.S)
_BLOCK = re.compile(r"O_(FIG|TBL)(?:_DISPLAY\w*)?\b.*?(?:C_\1(?:_DISPLAY)?\b|$)", re.S)
_SECTION = re.compile(r"O_ST_ABS(.*?)C_ST_ABS", re.S)
_ITEM_CLOSE = re.compile(r"C_LI(?!O)")
_STRAY = re.compile(r"\b[OCM]_[A-Z][A-Z_]*[A-Z]\b")  # any other marker: O_QD, C_QD, M_FIG …
_ANNOUNCES_FIGURE = re.compile(r"(?im)^\s*(graphical abstract|toc graphic|visual abstract)\s*$\n?")
MARKERS = ("O_ST_ABS", "C_ST_ABS", "O_LI", "C_LI", "O_SCPLOW", "C_SCPLOW", "O_SCPCAP", "C_SCPCAP",
           "O_FIG", "C_FIG", "O_TBL", "C_TBL")
# a character written by its name: "{rho}", "{Delta}", "{middle dot}" (one word only when it is
# a Greek letter's, so that braces in a sentence stay)
_NAMED = re.compile(r"\{([A-Za-z]+(?: [A-Za-z]+)*)\}")


def _named(m: re.Match) -> str:
    name = m.group(1)
    tries = [f"GREEK {'CAPITAL' if name[0].isupper() else 'SMALL'} LETTER {name}"]
    if " " in name:
        tries.append(name)
    for full in tries:
        try:
            return unicodedata.lookup(full)
        except KeyError:
            continue
    return m.group(0)


def _heading(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        return "\n"
    return f"\n{name} " if name.endswith((":", "?", ".", "!")) else f"\n{name}: "


def abstract_text(raw: str) -> str:
    """``raw`` (an abstract as the details API gives it) with its markers read; one line."""
    if not raw:
        return ""
    text = raw.replace("\r\n", "\n")
    if any(m in text for m in MARKERS):
        text = _SMALL_CAPS.sub(lambda m: m.group(2).lower() if m.group(1) == "LOW" else m.group(2), text)
        text = _BLOCK.sub("\n", text)
        text = _ANNOUNCES_FIGURE.sub("", text)
        # words glued to a section's heading are a heading too ("CLINICAL PERSPECTIVEO_ST_ABS
        # What is new?C_ST_ABS…", "AbstractO_ST_ABS…", that the abstract's title rule drops)
        text = re.sub(r"(\w)(?=O_ST_ABS)", r"\1:", text)
        text = _SECTION.sub(lambda m: _heading(m.group(1)), text)
        # a heading glued to a list ("HighlightsO_LI…") is a heading; every item a "• " item
        text = text.replace("C_LIO_LI", "\nO_LI")
        text = re.sub(r"(\w)O_LI", lambda m: m.group(1) + ":\nO_LI", text)
        text = text.replace("O_LI", "\n• ")
        text = _ITEM_CLOSE.sub("\n", text)
        text = _STRAY.sub(" ", text)
    text = _NAMED.sub(_named, text)
    text = _GLUED.sub(lambda m: m.group(1) + ": ", text)
    text = _ALONE.sub(lambda m: m.group(1) + ": ", text)
    # the abstract's own title before its first section ("Abstract/Summary", "Structured
    # abstract", small-caps "Abstract") says nothing about it: it goes
    text = _TITLE.sub("", text)
    text = re.sub(r":[ \t]*:", ":", text)
    return " ".join(text.split())
