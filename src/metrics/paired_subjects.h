// Paired comparison of subjects (models) on the same items: accuracy over all draws per
// subject, and between every two subjects an exact McNemar test on their per-item
// majority answers, Holm-adjusted across every pair in the analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// One subject in one cell (config x condition x outcome).
struct SubjectMean {
  std::string subject, config, condition, outcome;
  int64_t draws = 0;       // ok draws with this outcome
  int64_t items = 0;
  int64_t successes = 0;   // draws with value 1 (binary outcomes only)
  double mean = 0.0;       // mean value over all ok draws: the accuracy for a 0/1 outcome
  bool binary = false;     // every value is 0 or 1
};

/// Two subjects compared on the items both answered, in one cell.
struct SubjectPair {
  std::string config, condition, outcome, a, b;
  int64_t items = 0;                 // items with >= 1 ok draw of both subjects
  double mean_a = 0.0, mean_b = 0.0; // mean over all their draws on those items
  double difference = 0.0;           // mean_a - mean_b
  bool binary = false;               // McNemar only for 0/1 outcomes
  int64_t b_count = 0;               // items where a's majority is 1 and b's is 0
  int64_t c_count = 0;               // items where a's majority is 0 and b's is 1
  int64_t undetermined = 0;          // items where a tie leaves either majority undetermined
  double p_value = 1.0, p_holm = 1.0;  // exact two-sided McNemar; Holm over every pair (NaN if not binary)
};

struct PairedSubjectsResult {
  std::vector<SubjectMean> subjects;
  std::vector<SubjectPair> pairs;
};

/// Per config x condition x outcome: each subject's mean over all its ok draws, and for
/// every two subjects the items both answered: the per-item answer of a subject is the
/// strict majority of its replicates (a tie is undetermined and the item is left out of
/// the test, counted in `undetermined`; with one replicate it is that draw), b and c the
/// discordant item counts, p the exact two-sided McNemar p-value (stats::mcnemar_exact),
/// Holm-adjusted over every pair of the result. The test pairs items, not draws: draws of
/// one item are not independent. Sources: McNemar (1947); seed 000 §III.B, S12 (signed
/// exact McNemar, one answer per case); Holm (1979). `rows` are the store's ok outcome
/// rows. Errors: from the statistics (InvalidArgument), none for an empty store.
Result<PairedSubjectsResult> compute_paired_subjects(const std::vector<OutcomeRow>& rows);

/// analyses.paired_subjects: {subjects: [...], rows: [one per pair]} (docs/results.md).
nlohmann::json paired_subjects_to_json(const PairedSubjectsResult& r);

}  // namespace nf
