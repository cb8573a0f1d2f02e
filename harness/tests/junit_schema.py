"""A strict checker of JUnit XML as CI tools read it, with pytest's `--junit-xml` output (xunit2,
pytest's default) as the reference: the elements, attributes and nesting pytest writes, the
attribute types, and counts that agree with the testcases. test_junit_xml.py checks it accepts
pytest's own reports and rejects broken ones, so it can fail.

    problems(xml_text) -> list of what is wrong; [] for a valid report
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SUITE_ATTRS = {"name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname"}
SUITE_REQUIRED = {"name", "tests"}
CASE_ATTRS = {"classname", "name", "time", "file", "line"}
CASE_REQUIRED = {"classname", "name"}
RESULT_ELEMENTS = {"failure", "error", "skipped"}
RESULT_ATTRS = {"message", "type"}
OUTPUT_ELEMENTS = {"system-out", "system-err"}
DECIMAL = re.compile(r"^\d+(\.\d+)?$")
COUNT = re.compile(r"^\d+$")


def _attrs(element: ET.Element, allowed: set[str], required: set[str], where: str) -> list[str]:
    out = [f"{where}: unknown attribute {a!r}" for a in element.attrib if a not in allowed]
    out += [f"{where}: missing attribute {a!r}" for a in sorted(required - element.attrib.keys())]
    return out


def _case(case: ET.Element, where: str) -> list[str]:
    out = _attrs(case, CASE_ATTRS, CASE_REQUIRED, where)
    if "time" in case.attrib and not DECIMAL.match(case.attrib["time"]):
        out.append(f"{where}: time {case.attrib['time']!r} is not a non-negative decimal")
    results = [c for c in case if c.tag in RESULT_ELEMENTS]
    if len(results) > 1:
        out.append(f"{where}: {len(results)} result elements (at most one of failure/error/skipped)")
    seen_output = False
    for child in case:
        if child.tag in RESULT_ELEMENTS:
            if seen_output:
                out.append(f"{where}: <{child.tag}> after the output elements")
            out += _attrs(child, RESULT_ATTRS, set(), f"{where}/{child.tag}")
            if len(child):
                out.append(f"{where}/{child.tag}: has child elements")
        elif child.tag in OUTPUT_ELEMENTS:
            seen_output = True
            if child.attrib or len(child):
                out.append(f"{where}/{child.tag}: has attributes or child elements")
        else:
            out.append(f"{where}: unknown element <{child.tag}>")
    if (case.text or "").strip():
        out.append(f"{where}: text directly in <testcase>")
    return out


def _suite(suite: ET.Element, where: str) -> list[str]:
    out = _attrs(suite, SUITE_ATTRS, SUITE_REQUIRED, where)
    for count in ("tests", "failures", "errors", "skipped"):
        if count in suite.attrib and not COUNT.match(suite.attrib[count]):
            out.append(f"{where}: {count}={suite.attrib[count]!r} is not a count")
    if "time" in suite.attrib and not DECIMAL.match(suite.attrib["time"]):
        out.append(f"{where}: time {suite.attrib['time']!r} is not a non-negative decimal")
    cases = []
    for i, child in enumerate(suite):
        if child.tag == "testcase":
            cases.append(child)
            out += _case(child, f"{where}/testcase[{len(cases) - 1}]")
        elif child.tag not in {"properties", *OUTPUT_ELEMENTS}:
            out.append(f"{where}: unknown element <{child.tag}> (child {i})")
    actual = {"tests": len(cases)}
    for tag, count in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        actual[count] = sum(1 for c in cases for r in c if r.tag == tag)
    for count, n in actual.items():
        if count in suite.attrib and COUNT.match(suite.attrib[count]) and int(suite.attrib[count]) != n:
            out.append(f"{where}: {count}={suite.attrib[count]} but it holds {n}")
    return out


def problems(text: str) -> list[str]:
    """What is wrong with a JUnit XML document; [] when CI tools will read it."""
    try:
        root = ET.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except ET.ParseError as err:
        return [f"not well-formed XML: {err}"]
    if root.tag == "testsuite":
        return _suite(root, "testsuite")
    if root.tag != "testsuites":
        return [f"root element <{root.tag}>: expected <testsuites> or <testsuite>"]
    out = [f"testsuites: unknown attribute {a!r}" for a in root.attrib
           if a not in {"name", "tests", "failures", "errors", "skipped", "time"}]
    suites = list(root)
    if not suites:
        out.append("testsuites: no <testsuite>")
    for i, suite in enumerate(suites):
        if suite.tag != "testsuite":
            out.append(f"testsuites: unknown element <{suite.tag}>")
        else:
            out += _suite(suite, f"testsuite[{i}]")
    return out
