#pragma once
/// All the dumps of one job, their content made comparable across dumps. A dump's strings,
/// shapes and dtype lists live in its own tables (dump.h), so the same operation has different
/// indices on different ranks; here each is mapped once to a job-wide id, equal exactly when the
/// content is equal, and the matching (agreement.h) compares records of different ranks by
/// integers.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fr/dump.h"

namespace amaxcheck::fr {

/// One record of one dump: its dump's position in Job::dumps() and its index in the records.
struct RecordRef {
  std::uint32_t dump = 0, record = 0;
};

/// What the matching compares of a record, in job-wide ids.
struct Signature {
  std::uint32_t profiling_name = 0, op = 0;  // op: the name without the backend prefix
  std::uint32_t input_sizes = 0, output_sizes = 0, input_dtypes = 0, output_dtypes = 0;
  State state = State::scheduled;
  bool operator==(const Signature&) const = default;
};

class Job {
 public:
  /// `dumps` sorted by rank (load_dumps).
  explicit Job(std::vector<Dump> dumps);

  const std::vector<Dump>& dumps() const { return dumps_; }
  const Dump& dump(RecordRef r) const { return dumps_[r.dump]; }
  const Record& record(RecordRef r) const { return dumps_[r.dump].records[r.record]; }

  /// A dump's text as a job-wide id, and back.
  std::uint32_t text_id(std::uint32_t dump, TextId id) const { return text_ids_[dump][id]; }
  const std::string& text(std::uint32_t id) const { return texts_[id]; }

  Signature signature(RecordRef r) const;
  /// The profiling name's backend prefix ('nccl' in 'nccl:all_reduce'; '' when it has none).
  std::string_view backend(RecordRef r) const;
  /// What the members of a collective must agree on, in sizes and dtypes. all_to_all splits may
  /// legitimately differ per rank: no size is compared. A gather's output (the gathered list) is
  /// the root's alone, and a scatter's input: every other rank records it empty. PyTorch's
  /// fr_trace leaves the same out.
  enum class Compared : std::uint8_t { both, no_sizes, inputs_only, outputs_only };
  Compared compared(RecordRef r) const { return compared_[signature(r).op]; }

 private:
  std::uint32_t intern(const std::string& text);

  std::vector<Dump> dumps_;
  std::vector<std::string> texts_;
  std::vector<std::uint32_t> op_of_, backend_of_;  // by job-wide text id
  std::vector<Compared> compared_;                 // by job-wide text id of an op
  std::vector<std::vector<std::uint32_t>> text_ids_, shape_ids_, list_ids_;  // per dump, per table index
};

}  // namespace amaxcheck::fr
