"""The subject categories of bioRxiv and medRxiv, as their details API names them (lower case;
the API's ``?category=`` takes them with ``_`` for spaces). A ``biorxiv`` source's
``categories`` must be among its server's, so that a misspelt subject is refused by ``check``
instead of fetching nothing for ever; profiles may name them as they name arXiv categories."""

from __future__ import annotations

BIORXIV = (
    "animal behavior and cognition", "biochemistry", "bioengineering", "bioinformatics",
    "biophysics", "cancer biology", "cell biology", "clinical trials", "developmental biology",
    "ecology", "epidemiology", "evolutionary biology", "genetics", "genomics", "immunology",
    "microbiology", "molecular biology", "neuroscience", "paleontology", "pathology",
    "pharmacology and toxicology", "physiology", "plant biology",
    "scientific communication and education", "synthetic biology", "systems biology", "zoology",
)
MEDRXIV = (
    "addiction medicine", "allergy and immunology", "anesthesia", "cardiovascular medicine",
    "dentistry and oral medicine", "dermatology", "emergency medicine", "endocrinology",
    "epidemiology", "forensic medicine", "gastroenterology", "genetic and genomic medicine",
    "geriatric medicine", "health economics", "health informatics", "health policy",
    "health systems and quality improvement", "hematology", "hiv aids", "infectious diseases",
    "intensive care and critical care medicine", "medical education", "medical ethics",
    "nephrology", "neurology", "nursing", "nutrition", "obstetrics and gynecology",
    "occupational and environmental health", "oncology", "ophthalmology", "orthopedics",
    "otolaryngology", "pain medicine", "palliative medicine", "pathology", "pediatrics",
    "pharmacology and therapeutics", "primary care research",
    "psychiatry and clinical psychology", "public and global health", "radiology and imaging",
    "rehabilitation medicine and physical therapy", "respiratory medicine", "rheumatology",
    "sexual and reproductive health", "sports medicine", "surgery", "toxicology",
    "transplantation", "urology",
)
SUBJECTS = {"biorxiv": BIORXIV, "medrxiv": MEDRXIV}
ALL = frozenset(BIORXIV + MEDRXIV)


def subject(name: str) -> str:
    """``name`` as the servers write a subject: lower case, ``_`` read as a space
    (``Cell_Biology`` -> ``cell biology``)."""
    return " ".join(name.replace("_", " ").lower().split())
