#pragma once
/// Property 6, scale-update edge cases, run through the engine's scale_update op (a one-rank
/// scenario: the history and scale buffers start with the generated values, one op updates
/// them) and compared with the independent reference and with literal expectations:
/// - a zero, negative, infinite or NaN amax keeps the previous scale (scale_inv = 1/scale), and
///   a NaN anywhere in a `max` window makes the amax NaN (torch.max);
/// - a scale that overflows (a subnormal amax, or a negative margin) clamps to FLT_MAX;
/// - the E4M3 and E5M2 maxima are 448 and 57344 (amax = fp8_max gives scale 2^-margin);
/// - the margin divides the scale by exactly 2^margin;
/// - any window, algo, margin, format and previous scale gives the reference's results.
/// Each check generates its own inputs with *gen, so the mutation test can reuse it.

#include <vector>

#include "engine/engine.h"
#include "sequential_reference.h"

namespace amaxcheck::props {

struct ScaleCase {
  ScaleUpdateParams params;
  std::vector<float> history;  ///< history_len x tensors, row 0 newest
  std::vector<float> scale;    ///< before the update
};

/// Runs one scale_update op on the engine; returns what it read and wrote.
UpdateRecord engine_scale_update(const ScaleCase& c, const EngineOptions& engine = {});

void check_scale_update_matches_reference(const EngineOptions& engine = {});
void check_bad_amax_keeps_the_scale(const EngineOptions& engine = {});
void check_overflowing_scale_clamps_to_flt_max(const EngineOptions& engine = {});
void check_format_maxima(const EngineOptions& engine = {});
void check_margin_is_a_power_of_two(const EngineOptions& engine = {});

/// The window of `max` as torch.max reduces it: a NaN anywhere keeps the scale.
void check_nan_in_a_max_window_keeps_the_scale(const EngineOptions& engine = {});

}  // namespace amaxcheck::props
