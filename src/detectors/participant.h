#pragma once
/// Builds hazard participants from the engine's op sites.

#include "detectors/hazard.h"
#include "engine/observer.h"

namespace amaxcheck {

inline Participant participant_at(const OpSite& site) {
  return Participant{site.ref.rank, std::string(site.lane), site.ref, site.op ? site.op->name : "", site.op ? site.op->origin : "", site.step};
}

}  // namespace amaxcheck
