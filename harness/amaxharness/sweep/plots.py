"""The sweep's plots, PNG and SVG, written atomically.

exposed_latency: the exposed amax-reduction latency against the x knob (DP size), one line per
design, and beside it the time the reduction queued behind earlier collectives; points where the
safety run found a hazard are crossed out in red, because a fast design that races is not a
candidate.
safety_map: designs × x values, each cell coloured by verdict and labelled with hazard kinds.
Several points share a cell when the grid's `design` leaves out a knob that varies: the cell then
shows the worst of their verdicts and how many points it merges, so a hazard is never painted
over by a clean point.
Cost figures are the cost model's estimates: the titles say so, with the preset.
"""

from __future__ import annotations

from .. import atomic
from ..program import short_kind
from .grid import Grid
from .report import cost_label
from .results import VERDICT_ERROR, Row

_CELL = {"proven_clean": (0, "#2e7d32", "proven clean (exhaustive search complete)"),
         "no_hazard_found": (1, "#a5d6a7", "no hazard found (sampled)"),
         "inconclusive": (2, "#ffe082", "inconclusive (cut short)"),
         "hazard": (3, "#c62828", "hazard"),
         VERDICT_ERROR: (4, "#9e9e9e", "run failed"),
         "none": (5, "#ffffff", "not run")}

# Worst first: the verdict a cell of several points shows. A hazard anywhere in the cell is a
# hazard; a failed or cut-short point keeps the cell from reading clean; a sample is less than
# a proof.
SEVERITY = ("hazard", VERDICT_ERROR, "inconclusive", "no_hazard_found", "proven_clean", "none")


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "amaxcheck"  # stable ids: same data, same SVG bytes
    import matplotlib.pyplot as plt
    return plt


def _save(fig, folder, stem: str) -> list[str]:
    names = []
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None})):
        name = f"{stem}.{ext}"
        with atomic.atomic_path(folder / name) as tmp:
            fig.savefig(tmp, format=ext, dpi=120, bbox_inches="tight", metadata=meta)
        names.append(name)
    return names


def _x_positions(grid: Grid):
    values = grid.axes[grid.x] if grid.x else []
    numeric = values and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                             for v in values)
    if numeric:
        log2 = min(values) > 0 and max(values) / min(values) >= 8
        return (lambda v: v), log2, None
    index = {repr(v): i for i, v in enumerate(values)}
    return (lambda v: index[repr(v)]), False, [str(v) for v in values]


def _designs(rows: list[Row]) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = {}
    for r in rows:
        groups.setdefault(r.design, []).append(r)
    return groups


def _plot_figure(ax, grid: Grid, rows: list[Row], attr: str, ylabel: str, title: str) -> bool:
    """One line per design of `attr` against x; hazardous points crossed out. True if any."""
    to_x, log2, labels = _x_positions(grid)
    hazard_label = "hazard found"
    plotted, top = False, 0.0
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--")]
    for n, (design, group) in enumerate(_designs(rows).items()):
        pts = [(to_x(r.point[grid.x]) if grid.x else 0, getattr(r, attr), r)
               for r in group if getattr(r, attr) is not None]
        if not pts:
            continue
        pts.sort(key=lambda p: p[0])
        top = max([top] + [p[1] for p in pts])
        marker, linestyle = styles[n % len(styles)]  # overlapping designs stay distinguishable
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle=linestyle,
                label=design)
        bad = [p for p in pts if p[2].verdict == "hazard"]
        if bad:
            ax.scatter([p[0] for p in bad], [p[1] for p in bad], marker="x", s=90,
                       color="#c62828", zorder=3, label=hazard_label)
            hazard_label = None  # one legend entry for all designs
        plotted = True
    if not plotted:
        ax.text(0.5, 0.5, "no timed results", ha="center", va="center", transform=ax.transAxes)
    if log2:
        ax.set_xscale("log", base=2)
        ax.set_xticks(grid.axes[grid.x], [str(v) for v in grid.axes[grid.x]])
    elif labels:
        ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel(grid.x or "")
    ax.set_ylabel(ylabel)
    # From zero and without an offset, so a flat line looks flat (not a 1e-5 wiggle).
    ax.set_ylim(0, top * 1.1 if top > 0 else 1)
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return plotted


def plot_latency(plt, grid: Grid, rows: list[Row], folder) -> list[str]:
    """Exposed amax latency and, beside it, the time the reduction queued: a design whose
    wait hides the reduction (exposed 0) still shows what a shared communicator costs it."""
    fig, (exposed, queued) = plt.subplots(1, 2, figsize=(12, 4.8))
    plotted = _plot_figure(exposed, grid, rows, "exposed_amax_latency_us",
                           "exposed amax-reduction latency (µs)", "modelled exposed amax latency")
    _plot_figure(queued, grid, rows, "amax_queued_us", "amax reduction queued (µs)",
                 "modelled amax queued behind earlier collectives")
    fig.suptitle(f"{grid.title}\n{cost_label(rows)}", y=1.04)
    if plotted:
        # Below both panels: a grid of many designs would hide the lines inside them.
        handles, labels = exposed.get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=2 if len(labels) > 8 else 1)
    names = _save(fig, folder, "exposed_latency")
    plt.close(fig)
    return names


def _verdict(row: Row) -> str:
    if row.verdict in _CELL:
        return row.verdict
    return "none" if row.verdict == "skipped" else VERDICT_ERROR


def cell(rows: list[Row]) -> tuple[str, str]:
    """The verdict and label of one cell: the worst verdict of its points, the hazard kinds of
    all its hazardous points, and how many points it merges when more than one."""
    if not rows:
        return "none", ""
    key = min((_verdict(r) for r in rows), key=SEVERITY.index)
    if key == "hazard":
        kinds: list = []
        for r in rows:
            kinds += [k for k in r.hazard_kinds if k not in kinds]
        text = "\n".join(short_kind(k) for k in kinds)
    else:
        text = {"proven_clean": "proof", "no_hazard_found": "ok*", "inconclusive": "?",
                VERDICT_ERROR: "err", "none": ""}[key]
    if len(rows) > 1:
        text += f"\n(worst of {len(rows)})"
    return key, text


def safety_cells(grid: Grid, rows: list[Row]):
    """Designs, x values, and per design and x value the cell's verdict and label."""
    columns = grid.axes[grid.x] if grid.x else [None]
    designs = _designs(rows)
    col_of = {repr(v): i for i, v in enumerate(columns)}
    cells = []
    for group in designs.values():
        points: list[list[Row]] = [[] for _ in columns]
        for r in group:
            points[col_of[repr(r.point[grid.x])] if grid.x else 0].append(r)
        cells.append([cell(p) for p in points])
    return list(designs), columns, cells


def plot_safety_map(plt, grid: Grid, rows: list[Row], folder) -> list[str]:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    designs, columns, verdicts = safety_cells(grid, rows)
    cells = [[_CELL[key][0] for key, _ in row] for row in verdicts]
    texts = [[text for _, text in row] for row in verdicts]
    merged = any("worst of" in text for row in texts for text in row)
    width = max(6.0, 0.8 * len(columns) + 3)
    height = max(2.5, 0.6 * len(designs) + 1.5)
    fig, ax = plt.subplots(figsize=(width, height))
    colors = [c[1] for c in sorted(_CELL.values())]
    ax.imshow(cells, cmap=ListedColormap(colors), vmin=-0.5, vmax=len(colors) - 0.5,
              aspect="auto")
    size = 8 if len(columns) <= 16 else 6
    if len(columns) <= 40:
        for i, row in enumerate(texts):
            for j, text in enumerate(row):
                if text:
                    light = cells[i][j] in (1, 4)
                    ax.text(j, i, text, ha="center", va="center", fontsize=size,
                            color="black" if light else "white")
    ax.set_xticks(range(len(columns)), ["" if c is None else str(c) for c in columns])
    ax.set_yticks(range(len(designs)), designs)
    ax.set_xlabel(grid.x or "")
    ax.set_title(f"{grid.title}\nsafety per design"
                 + ("\n(a cell of several points shows the worst verdict)" if merged else ""))
    used = sorted({c for row in cells for c in row})
    legend = [Patch(facecolor=v[1], edgecolor="black", label=v[2]) for v in sorted(_CELL.values())
              if v[0] in used]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    names = _save(fig, folder, "safety_map")
    plt.close(fig)
    return names


def write_plots(grid: Grid, rows: list[Row], folder) -> list[str]:
    """Writes both plots; returns the file names (relative to `folder`)."""
    plt = _pyplot()
    return plot_latency(plt, grid, rows, folder) + plot_safety_map(plt, grid, rows, folder)

