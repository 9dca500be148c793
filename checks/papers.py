"""The one list of papers: a :class:`Paper` descriptor per paper, everything paper-specific hangs off it.

The layer packages' own modules never name a paper; they ask the descriptor of a claim's paper
(:func:`paper_of`) for what they need: the LaTeX names of its symbols, the styles of its readings
in plots, the module that registers its claims, its specification's deliverables list.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from derivations.errors import InvalidArgument, unknown_name
from derivations.scan_snap.symbols import READINGS as SS_READINGS
from derivations.word_cooccurrence.symbols import READINGS as CO_READINGS


@dataclass(frozen=True)
class Paper:
    """A paper: prefix, titles and label conventions, symbols, readings, modules and specification.

    Parameters
    ----------
    prefix
        The id prefix (``ih``).
    title, reference
        The paper's title and where it is published (arXiv id).
    versions
        Label conventions: the bracket tags of the paper's versions (``{"W": "workshop", "F": "full"}``);
        a claim's ``label`` uses the first, ``label_alt`` the second.
    spec
        The specification's file name in ``shared/spec``.
    checks
        The module that registers the paper's claims when imported.
    symbols
        ``"module:NAME"`` of the mapping symbol name → LaTeX (``wstar`` → ``w^{\\star}``).
    readings
        Reading flag → its values, the canonical one first (spec: the verdict is decided on it).
    styles
        Reading value → matplotlib line style of its overlays in figures.
    """

    prefix: str
    title: str
    reference: str
    spec: str
    checks: str
    symbols: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)
    readings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    styles: Mapping[str, str] = field(default_factory=dict)

    def symbol_names(self) -> dict[str, str]:
        """The LaTeX names of the paper's symbols (empty when it declares none)."""
        if not self.symbols:
            return {}
        module, _, name = self.symbols.partition(":")
        names = getattr(importlib.import_module(module), name)
        return type(names)(names)  # a copy of the same kind (a paper's mapping may know names by pattern)

    def canonical(self) -> dict[str, str]:
        """The canonical value of every reading flag."""
        return {flag: values[0] for flag, values in self.readings.items()}

    def load(self) -> None:
        """Import the module that registers the paper's claims."""
        importlib.import_module(self.checks)

    def spec_path(self, shared: Path) -> Path:
        """The specification's path under a ``shared`` folder."""
        return shared / "spec" / self.spec

    def deliverables(self, spec_text: str) -> list[str]:
        """The ids of the specification's deliverables list (its section "Deliverables for this paper")."""
        match = re.search(r"^## \d+\. Deliverables for this paper$", spec_text, re.M)
        if match is None:
            raise InvalidArgument(f"the specification {self.spec} has no section 'Deliverables for this paper'")
        section = spec_text[match.end():]
        ident = rf"{re.escape(self.prefix)}\.[A-Za-z0-9_.]+"
        items: list[list[str]] = []
        for line in section.splitlines():
            if re.match(r"^- \[[ x]\] ", line):
                items.append([line])
            elif items and items[-1] and line.startswith((" ", "\t")) and line.strip():
                items[-1].append(line)  # a continuation line of the item
            else:
                items.append([])
        ids: list[str] = []
        for item in filter(None, items):
            first = re.match(rf"^- \[[ x]\] `?({ident})", item[0])
            # an item that starts with an id is that deliverable; a labelled group ("Initialization: `a`, `b`")
            # lists every id it quotes
            ids += [first[1]] if first else re.findall(rf"`({ident})`", " ".join(item))
        return ids


PAPERS: dict[str, Paper] = {
    paper.prefix: paper
    for paper in (
        Paper(
            prefix="ih",
            title="How Transformers Get Rich / How Transformers Implement Induction Heads",
            reference="Wang, Yu, E, Wu, arXiv:2410.11474",
            spec="induction-head.md",
            checks="checks.induction_head",
            symbols="derivations.induction_head.symbols:SYMBOL_NAMES",
            versions={"W": "workshop version", "F": "full version"},
            # spec §2.10 (the flags with named values)
            readings={
                "tokens": ("gaussian", "boolean"), "head1_range": ("canonical", "literal"),
                "ih_model_range": ("canonical", "literal", "mixed"), "ih_keys": ("y", "x_prev"),
                "value_layout": ("separate", "printed_matrices"), "init": ("eq4", "c2"),
                "stage2_first_layer": ("ideal", "pipeline"), "flow": ("paper", "balanced"),
                "ih_loss": ("exp_simplified", "softmax_exact", "softmax_largeL"),
                "eq17_gamma": ("R", "linear"), "eq16_relation": (">=", "="),
                "fig4_target": ("linear", "squared"), "fig4_dp_shape": ("matrix", "vector"),
            },
            styles={"paper": ":", "balanced": "--", "softmaxLL": "-."},
        ),
        Paper(
            prefix="rl",
            title="How Transformers Learn Regular Language Recognition: A Theoretical Study on Training "
                  "Dynamics and Implicit Bias",
            reference="Huang, Liang, Yang, arXiv:2505.00926",
            spec="regular-language.md",
            checks="checks.regular_language",
            symbols="derivations.regular_language.symbols:SYMBOL_NAMES",
            # spec §2.9, canonical value first ("<int>" / "mp:<digits>": any integer d / any precision)
            readings={
                "ep_count": ("contiguous", "subsequence"), "boost_steps": ("t_lt_t0", "t_le_t0"),
                "schedule": ("two_phase", "vanilla_eta", "vanilla_etalambda"), "cot_max_len": ("2L0-1", "2L0-2"),
                "reg_max_len": ("L0-1", "L0"), "dim": ("2*maxlen", "<int>"), "sign_zero": ("+1", "count_as_error"),
                "fig_attention_panel": ("weights", "raw_scores"),
                "cot_after_ep_schedule": ("phase2", "two_phase_restart"), "precision": ("float64", "mp:<digits>"),
                "position_range": ("le_L", "le_Lmax"), "phase1_t_range": ("all", "from1", "from3"),
                "logistic_rhs": ("as_printed", "abs"), "phase2_T": ("min", "b2_rhs", "b6"),
                "phase2_window": ("own", "zero_to_T", "t2_to_T"), "focus_reading": ("inequalities", "argmax"),
                "automaton_start": ("t1", "t2"), "sec6_reading": ("descriptive", "slope_profile"),
            },
        ),
        Paper(
            prefix="ss",
            title="Scan and Snap: Understanding Training Dynamics and Token Composition in 1-layer Transformer",
            reference="Tian, Wang, Chen, Du, arXiv:2305.16380",
            spec="scan-and-snap.md",
            checks="checks.scan_snap",
            symbols="derivations.scan_snap.symbols:SYMBOL_NAMES",
            # spec §2.9 (the setting options ss.opt.*), canonical value first
            readings=dict(SS_READINGS),
        ),
        Paper(
            prefix="co",
            title="Training Dynamics of Transformers to Recognize Word Co-occurrence via Gradient Flow Analysis",
            reference="Yang, Kailkhura, Wang, Liang, NeurIPS 2024",
            spec="word-cooccurrence.md",
            checks="checks.word_cooccurrence",
            symbols="derivations.word_cooccurrence.symbols:SYMBOL_NAMES",
            # spec §1 rules 3, 7 and the flags of §2.2–§7.1, canonical value first
            readings=dict(CO_READINGS),
        ),
    )
}


def paper(prefix: str) -> Paper:
    """The descriptor of ``prefix``; an unknown prefix lists the papers."""
    try:
        return PAPERS[prefix]
    except KeyError:
        raise unknown_name("paper prefix", prefix, PAPERS) from None


def paper_of(claim_id: str) -> Paper:
    """The descriptor of the paper a claim id belongs to (``ih.cf.M`` → ``ih``)."""
    return paper(claim_id.partition(".")[0])
