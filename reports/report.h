// Report formats: every one renders the same Report (reports/model.h) and
// computes nothing the others lack; the shared derivations (story, path of
// the violating events, coverage rows) live in the model.
//
//   text   terminal summary; ANSI colour only when asked for
//   md     GitHub-flavoured Markdown for people (PR comments, job summaries)
//   html   one self-contained page with a timeline per counterexample
//   junit  JUnit XML for CI test tabs
//   json   the full model, versioned; ParseJsonReport() reads it back
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/model.h"
#include "sim/status.h"

namespace xackly::report {

// The terminal summary: a table of every check (protocol, expected,
// observed, cases, minimal counterexample size, replay file), coverage gaps,
// then one block per check that NeedsDetail(), mismatches last: its story,
// violations, violating path and replay command. The last line of a failure block is its
// replay command. With `color` false the text contains no control character
// other than '\n'; with `color` true it adds ANSI SGR sequences.
// `mismatches_only`: detail blocks only for checks that did not match (the
// terminal view of a many-check run; the report file keeps every block).
std::string RenderText(const Report& report, bool color, bool mismatches_only = false);

// A server matrix for people: one row per check (MatrixRows), a column per
// server with its verdict (and "MISMATCH" where it missed the expectation),
// DIFFERS where the servers' verdicts or causes differ, then a line saying
// how many rows differ and where each server's reports are; for shards, how
// to merge them. `rows_only` (--quiet): the rows' lines and nothing else.
std::string RenderMatrixText(const std::vector<ServerResult>& servers, bool color, bool rows_only = false);
// The same as JSON: "servers" (label, dir, server_version, exit_code) and "rows"
// (name, expected, verdicts, passed, differs).
std::string RenderMatrixJson(const std::vector<ServerResult>& servers);

// The same for people, as GitHub-flavoured Markdown: tables, stories as
// numbered lists, a coverage table per check (never-fired sites flagged).
std::string RenderMarkdown(const Report& report);

// One self-contained HTML page (inline CSS, SVG and a little JS; no external
// reference). Per counterexample: a timeline with a lane per actor, steps on
// compressed virtual time, the violating path highlighted and each step's
// command and reply on hover; beside it the story, violations, coverage and
// replay command. Stable hooks for tests and scripts, where N counts detail
// sections from 1: section#case-N.case, svg#timeline-N.timeline,
// g.lane[data-actor], g.step (classes: read ack claim produce effect crash
// stall lost delete restart reconnect server-restart fault local other;
// "violation" when on the path), ol#story-N.story, code#replay-N.replay,
// table#verdicts, table#coverage-N.coverage.
std::string RenderHtml(const Report& report);

// JUnit XML (the Jenkins/Ant junit-10.xsd shape): one <testsuite> with one
// <testcase classname="xackly" name="<check name>"> per check; a check that
// did not match its expectation carries <failure message type="mismatch">
// with its story and replay command; <system-out> holds the details.
std::string RenderJunit(const Report& report);

// The full model as JSON, {"schema": kSchemaVersion, ...}; ParseJsonReport()
// reads it back into an equal Report (text fields must be valid UTF-8 for
// that; invalid bytes are written as U+FFFD). A counterexample trace longer
// than kJsonFullTraceLines keeps its path lines (PathLines) and the first
// and last kJsonTraceEndLines; every other line is written as null (read
// back as a note saying so) and counted in "trace_lines_elided".
inline constexpr size_t kJsonFullTraceLines = 2000;
inline constexpr size_t kJsonTraceEndLines = 50;
std::string RenderJson(const Report& report);

// Reads RenderJson() output. Fails with kInvalidArgument naming the JSON
// path when the text is not JSON, a field is missing or has the wrong type,
// or the schema version is not kSchemaVersion.
Result<Report> ParseJsonReport(std::string_view json);

// The format names, in the order a user sees them: text, md, html, junit, json.
const std::vector<std::string>& FormatNames();

// Parses a --format list ("text,md,html"): names separated by commas,
// spaces around them ignored, duplicates dropped, order kept. On an empty
// list or an unknown name returns {} and sets *error to a message that
// lists the valid names. REQUIRES: error != nullptr
std::vector<std::string> ParseFormats(std::string_view list, std::string* error);

// The file a format is written to: report.txt, report.md, report.html,
// junit.xml, report.json. REQUIRES: `format` is one of FormatNames()
std::string ReportFileName(std::string_view format);

// Renders `report` in `format` as it is written to a file (text without
// colour). REQUIRES: `format` is one of FormatNames()
std::string RenderFormat(const Report& report, std::string_view format);

}  // namespace xackly::report
