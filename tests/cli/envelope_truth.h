// The true score of every (subject, configuration) cell of examples/envelope.yaml: the
// mean probability of the gold option under each sim's own distribution
// (SimBackend::option_probabilities on the rendered prompt), on both scoring paths.
// Shared by the offline and the serve-sim envelope tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "common/test_data.h"
#include "data/medqa.h"
#include "perturb/mcq_conditions.h"
#include "sim/sim.h"
#include "spec/study.h"
#include "task/mcq.h"

namespace nf::testing {

/// (subject, config id with ",scoring_path=...") -> expected accuracy. Fails the calling
/// test (and returns what it has) when the study or data cannot be read.
inline std::map<std::pair<std::string, std::string>, double> envelope_truth(const std::string& study_path) {
  std::map<std::pair<std::string, std::string>, double> truth;
  ::setenv("NOISEFLOOR_DATA", data_dir().c_str(), 1);
  auto study = load_study(study_path);
  EXPECT_TRUE(study.ok()) << study.status().message();
  if (!study.ok()) return truth;
  auto items = read_medqa_jsonl(study->dataset.path, study->dataset.limit, study->dataset.id_field);
  EXPECT_TRUE(items.ok());
  if (!items.ok()) return truth;
  for (const auto& sub : study->subjects) {
    auto params = SimParams::from_json(sub.sim);
    EXPECT_TRUE(params.ok()) << params.status().message();
    if (!params.ok()) return truth;
    SimBackend sim(*params);
    for (const auto& cfg : expand_configs(study->axes)) {
      double sum = 0;
      for (const auto& item : *items) {
        auto shown = apply_mcq_condition(item, "none", static_cast<uint64_t>(study->seed));
        EXPECT_TRUE(shown.ok());
        if (!shown.ok()) return truth;
        auto msgs = render_mcq_prompt(*shown, cfg.template_name);
        EXPECT_TRUE(msgs.ok());
        if (!msgs.ok()) return truth;
        SimMcqPrompt prompt;
        EXPECT_TRUE(parse_sim_mcq_prompt(msgs->back().content, prompt));
        const auto p = sim.option_probabilities(sub.model, prompt.stem, prompt.options, cfg.temperature, cfg.top_p,
                                                msgs->back().content);
        for (size_t i = 0; i < shown->options.size(); ++i)
          if (shown->options[i].letter == shown->answer) sum += p[i];
      }
      truth[{sub.name, cfg.id + ",scoring_path=free_form"}] = sum / static_cast<double>(items->size());
      // The logprob path (greedy only): the sim's most likely option is its greedy answer.
      if (cfg.temperature == 0.0)
        truth[{sub.name, cfg.id + ",scoring_path=logprob"}] = sum / static_cast<double>(items->size());
    }
  }
  return truth;
}

}  // namespace nf::testing
