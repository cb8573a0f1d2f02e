#pragma once
/// Float values compared by their bits: what "bit-identical replicas" means. +0 and -0 differ,
/// and so do NaNs with different payloads, while a NaN equals a NaN of the same bits, unlike
/// `==` on floats. The value detector and a scenario's sequential reference use it alike, so the
/// reference never calls replicas different that the detector calls identical, or the reverse.

#include <cstring>
#include <span>

namespace amaxcheck {

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace amaxcheck
