#pragma once
/// What a property prints when it fails: the counterexample as a scenario file, its trace, and
/// the commands that reproduce it. RapidCheck adds the RC_PARAMS="reproduce=..." line.
///
/// Files go to $AMAXCHECK_PROPERTY_OUT, else <temp>/amaxcheck-properties, named after the
/// property and a hash of the scenario, so the shrunk counterexample's files are the ones its
/// log names. Properties call this only when a check fails, and pass the text to RC_LOG, which
/// RapidCheck prints for the final (shrunk) counterexample only.

#include <ostream>
#include <string>
#include <vector>

#include "observed_run.h"

namespace amaxcheck {

/// RapidCheck prints generated scenarios in the scenario-file form.
void showValue(const Scenario& scenario, std::ostream& os);
void showValue(const ScaleUpdateParams& params, std::ostream& os);

}  // namespace amaxcheck

namespace amaxcheck::props {

/// Writes `<property>-<hash>.scenario.json` and `.trace.jsonl` and returns:
///   rebuild: amaxcheck check te-async --dp 2 ... --strategy pct --seed S --depth D --runs 1
///   scenario: amaxcheck check FILE --strategy ... --seed S --runs 1
///   replay:   amaxcheck replay FILE
/// `rebuild` is the protocol command line, or empty for hand-built scenarios.
std::string failure_report(const std::string& property, const ObservedRun& run, const std::string& rebuild = "");

/// For a failure found by applying `actions` one by one (the model-based test): the run that
/// takes those actions, then the first enabled action until the end, written as a trace.
std::string action_failure_report(const std::string& property, const Scenario& scenario,
                                  const std::vector<Action>& actions, const EngineOptions& engine);

/// The folder failure files go to (created when missing).
std::string failure_folder();

}  // namespace amaxcheck::props
