"""Collective agreement across ranks: the findings of the program's matching, as values.

The matching itself is C++ (src/fr/agreement.h and inversion.h, run by `amaxcheck fr-scan`,
dump.py): per process group, records are matched by collective_seq_id and must agree on the
operation, the sizes and the dtypes, every member must have issued them, and their states
should agree (not compared for gloo, which records every collective as `scheduled`); a member
without a dump, or one whose wrapped buffer holds no record of the group, is undecidable. Across
groups, two ranks that issue the collectives of two shared groups in a different relative order
deadlock when collective kernels are serialized (NCCL < 2.26); gloo runs each group on its own
threads, so there an inversion is a note. The rule follows each group's backend
(`--kernels auto`, the default) unless the user forces `serialized` or `concurrent`.

This module holds what the program found (`check`) and derives the verdict and the root-cause
order from it.
"""

from __future__ import annotations

import dataclasses
import itertools

from .dump import Record, Scan

KINDS = ("not_joined", "type_mismatch", "size_mismatch", "dtype_mismatch", "state_mismatch",
         "membership_mismatch", "order_inversion")


@dataclasses.dataclass
class Finding:
    kind: str
    text: str


@dataclasses.dataclass
class Divergence:
    group: str
    seq: int | None
    findings: list
    ranks: list  # the ranks that deviate (or do not join)
    records: dict  # rank -> [Record] at this seq ([] when missing)
    other: tuple | None = None  # order inversion: (other group, its seq)
    time_ns: int | None = None  # the earliest time_created_ns of its records (0s ignored)
    deadlocks: bool = True  # order inversion: under the kernels rule that applies

    @property
    def kinds(self) -> list:
        return sorted({f.kind for f in self.findings}, key=KINDS.index)


@dataclasses.dataclass
class GroupReport:
    name: str
    desc: str
    backends: tuple  # the profiling names' prefixes seen ('gloo', 'nccl'), sorted
    members: tuple
    dumped: tuple  # members that have a dump
    window: tuple | None  # (first, last) collective_seq_id compared
    matched: int
    divergent: int  # collective_seq_ids with at least one finding
    first: Divergence | None
    membership: list  # membership_mismatch findings (the dumps' pg_config disagree)
    undecidable: dict  # rank -> why its part cannot be checked
    divergent_seqs: list  # (seq, kinds, ranks) of every divergent collective_seq_id

    @property
    def backend(self) -> str:
        return "/".join(self.backends) or "unknown"


@dataclasses.dataclass
class AgreementReport:
    groups: list
    inversions: list  # Divergence of kind order_inversion, each with .deadlocks
    p2p_ignored: int
    notes: list
    missing_ranks: list  # ranks known to exist that have no dump

    @property
    def divergences(self) -> list:
        found = []
        for g in self.groups:
            if g.membership:
                found.append(Divergence(group=g.name, seq=None, findings=g.membership, ranks=[],
                                        records={}))
            if g.first:
                found.append(g.first)
        return found + [inv for inv in self.inversions if inv.deadlocks]

    @property
    def undecidable(self) -> bool:
        return bool(self.undecidable_reasons())

    def undecidable_reasons(self) -> list[str]:
        """Why part of the job cannot be checked, one line each; empty when all of it was.
        Point-to-point records (send/recv) are counted by fr-scan but matched by nothing (nor
        kept in the scenario): a hung send is as invisible to the import as a missing dump."""
        reasons = []
        if self.missing_ranks:
            reasons.append(f"no dump for rank(s) {ranks_text(self.missing_ranks)}")
        undecidable = [g.name for g in self.groups if g.undecidable]
        if undecidable:
            reasons.append("part of group(s) " + ", ".join(undecidable[:8]) +
                           (f" and {len(undecidable) - 8} more" if len(undecidable) > 8 else "") +
                           " is undecidable")
        if self.p2p_ignored:
            reasons.append(f"{self.p2p_ignored} point-to-point record(s) (send/recv) are not "
                           "checked: the import matches collectives only")
        return reasons

    @property
    def verdict(self) -> str:
        if self.divergences:
            return "divergent"
        return "inconclusive" if self.undecidable else "consistent"

    def ordered_divergences(self) -> list:
        """The root cause first: the earliest divergence in time (time_created_ns), then seq;
        those without a time (membership) come last."""
        return sorted(self.divergences, key=lambda d: (
            d.time_ns is None, d.time_ns or 0, d.seq if d.seq is not None else -1,
            len(d.group), d.group))


def outcome(report: AgreementReport, sim: dict | None = None,
            sim_error: str | None = None) -> tuple[str, list[str]]:
    """The import's verdict and why, from the dumps' findings and the simulator's check of the
    converted scenario (None when it did not run): 'error' (the simulator failed: an internal
    error, whatever the dumps say), 'divergent' (a divergence in the dumps), 'hazard' (none
    there, but the simulator finds a hazard), 'inconclusive' (part of the job is undecidable, or
    the simulation was cut short) or 'consistent'. The exit code follows it (EXIT_CODES), so the
    report and the exit code never disagree."""
    if sim_error:
        return "error", [f"the simulator could not check the converted scenario: {sim_error}"]
    if report.divergences:
        return "divergent", []
    if sim is not None and sim["verdict"] == "hazard":
        kinds = ", ".join(sim["hazard_kinds"]) or "a hazard"
        return "hazard", [f"the dumps show no divergence, but the simulator finds {kinds} in "
                          "the converted scenario"]
    reasons = report.undecidable_reasons()
    if sim is not None and sim["verdict"] == "inconclusive":
        reasons.append("the simulator's check of the converted scenario was cut short")
    return ("inconclusive", reasons) if reasons else ("consistent", [])


EXIT_CODES = {"consistent": 0, "divergent": 1, "hazard": 1, "error": 3, "inconclusive": 4}


def ranks_text(ranks) -> str:
    """Sorted ranks with runs folded: 0, 2-5, 9 (the program's findings fold them alike)."""
    out = []
    for _, run in itertools.groupby(enumerate(sorted(ranks)), lambda p: p[1] - p[0]):
        run = [r for _, r in run]
        out.append(str(run[0]) if len(run) == 1 else
                   f"{run[0]}, {run[1]}" if len(run) == 2 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def _findings(rows: list) -> list:
    return [Finding(kind, text) for kind, text in rows]


def _divergence(d: dict, records: list[Record]) -> Divergence:
    return Divergence(group=d["group"], seq=d["seq"], findings=_findings(d["findings"]),
                      ranks=d["ranks"],
                      records={rank: [records[i] for i in rows] for rank, rows in d["records"]},
                      other=tuple(d["other"]) if d["other"] else None, time_ns=d["time_ns"],
                      deadlocks=d["deadlocks"])


def _group(g: dict, records: list[Record]) -> GroupReport:
    return GroupReport(name=g["name"], desc=g["desc"], backends=tuple(g["backends"]),
                       members=tuple(g["members"]), dumped=tuple(g["dumped"]),
                       window=tuple(g["window"]), matched=g["matched"], divergent=g["divergent"],
                       first=_divergence(g["first"], records) if g["first"] else None,
                       membership=_findings(g["membership"]),
                       undecidable={rank: why for rank, why in g["undecidable"]},
                       divergent_seqs=[tuple(s) for s in g["divergent_seqs"]])


def check(scan: Scan) -> AgreementReport:
    """The program's findings (dump.load_dumps) as the report's values."""
    d = scan.doc
    return AgreementReport(groups=[_group(g, scan.records) for g in d["groups"]],
                           inversions=[_divergence(x, scan.records) for x in d["inversions"]],
                           p2p_ignored=d["p2p_ignored"], notes=d["notes"],
                           missing_ranks=d["missing_ranks"])


__all__ = ["EXIT_CODES", "AgreementReport", "Divergence", "Finding", "GroupReport", "Record",
           "check", "outcome"]
