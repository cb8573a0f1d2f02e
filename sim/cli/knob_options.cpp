// Command-line options for the knobs: one `--<knob>` per entry of the knob table.
#include "cli/knob_options.h"

#include "protocols/knob_table.h"

namespace amaxcheck::cli {
namespace {

/// Runs the knob's parser on a scratch copy, so a bad value fails CLI11's validation (with the
/// option's name) before any callback stores it.
CLI::Validator knob_validator(const KnobEntry& entry) {
  return CLI::Validator(
      [&entry](std::string& value) {
        ProtocolKnobs scratch;
        const auto error = entry.set(scratch, value);
        return error ? *error : std::string();
      },
      entry.doc.values, entry.doc.name);
}

std::string describe(const KnobDoc& doc) {
  return doc.help + " (default: " + doc.default_value + ")";
}

}  // namespace

void add_knob_options(CLI::App& app, ProtocolKnobs& knobs, std::vector<std::string>* given) {
  for (const KnobEntry& entry : knob_table()) {
    const std::string option = "--" + entry.doc.name;
    const KnobEntry* knob = &entry;
    const auto note = [given, option] {
      if (given != nullptr) given->push_back(option);
    };
    if (entry.doc.flag) {
      app.add_flag_function(
          option, [&knobs, knob, note](std::int64_t count) {
            note();
            (void)knob->set(knobs, count > 0 ? "on" : "off");
          },
          describe(entry.doc));
    } else if (entry.doc.repeatable) {
      app.add_option_function<std::vector<std::string>>(
             option,
             [&knobs, knob, note](const std::vector<std::string>& values) {
               note();
               for (const std::string& value : values) (void)knob->set(knobs, value);
             },
             describe(entry.doc))
          ->allow_extra_args(false)
          ->type_name(entry.doc.values)
          ->check(knob_validator(entry));
    } else {
      app.add_option_function<std::string>(
             option, [&knobs, knob, note](const std::string& value) {
               note();
               (void)knob->set(knobs, value);
             },
             describe(entry.doc))
          ->type_name(entry.doc.values)
          ->check(knob_validator(entry));
    }
  }
}

}  // namespace amaxcheck::cli
