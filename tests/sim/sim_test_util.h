// Helpers shared by the sim and backend tests: an MCQ prompt in the task/mcq.h layout and the
// tag extraction the sim's replies follow.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cmath>

#include "backend/backend.h"
#include "sim/sim.h"

namespace nf::testing {

inline std::string render_mcq(const std::string& stem, const std::vector<std::string>& options) {
  std::string s = stem + "\n\n";
  for (size_t i = 0; i < options.size(); ++i) {
    s += std::string(1, static_cast<char>('A' + i)) + ". " + options[i] + "\n";
  }
  s += "\nThink step by step, then give your final answer as <answer>X</answer>.";
  return s;
}

inline ChatRequest mcq_request(const std::string& stem, const std::vector<std::string>& options, double temperature,
                               std::optional<int64_t> seed, double top_p = 1.0, const std::string& model = "sim-a") {
  ChatRequest r;
  r.model = model;
  r.messages = {{"system", "You are a careful clinician."}, {"user", render_mcq(stem, options)}};
  r.temperature = temperature;
  r.top_p = top_p;
  r.seed = seed;
  return r;
}

/// The letter in the last <answer>X</answer>, or "" if none.
inline std::string answer_letter(const std::string& text) {
  const size_t open = text.rfind("<answer>");
  if (open == std::string::npos || open + 18 > text.size()) return "";
  const char c = text[open + 8];
  if (c < 'A' || c > 'J' || text.compare(open + 9, 9, "</answer>") != 0) return "";
  return std::string(1, c);
}

/// A small fixed item bank.
inline const std::vector<std::pair<std::string, std::vector<std::string>>>& item_bank() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> bank = {
      {"A 45-year-old man has crushing chest pain radiating to the left arm. What is the next step?",
       {"Aspirin and an ECG", "Discharge home", "Oral antibiotics", "Abdominal ultrasound",
        "None of the other answers is correct."}},
      {"Which vitamin deficiency causes scurvy?", {"Vitamin A", "Vitamin B12", "Vitamin C", "Vitamin D"}},
      {"A child has a barking cough and stridor. Most likely diagnosis?",
       {"Croup", "Epiglottitis", "Asthma", "There is not enough information to answer this question."}},
      {"Which drug reverses opioid overdose?", {"Naloxone", "Flumazenil", "Atropine"}},
  };
  return bank;
}

// Empirical choice frequencies of `sim` against option_probabilities over the item bank
// at (T, top_p), 4000 seeded draws per item: sd(p-hat) <= 0.0079, so |diff| < 0.03 is a
// 3.8-sd bound (flake rate < 2e-4 per option for an arbitrary seed; the seeds here are
// fixed, so the test is deterministic).
inline void check_frequencies(SimBackend& sim, double T, double top_p) {
  for (const auto& [stem, opts] : item_bank()) {
    const auto p = sim.option_probabilities("sim-a", stem, opts, T, top_p);
    std::vector<double> freq(opts.size(), 0.0);
    const int n = 4000;
    for (int s = 0; s < n; ++s) {
      const std::string let = answer_letter(sim.complete(mcq_request(stem, opts, T, s, top_p)).content);
      ASSERT_EQ(let.size(), 1u);
      freq[static_cast<size_t>(let[0] - 'A')] += 1.0 / n;
    }
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_LT(std::abs(freq[i] - p[i]), 0.03) << "T=" << T << " top_p=" << top_p << " option " << i;
      if (p[i] == 0.0) {
        EXPECT_EQ(freq[i], 0.0);
      }
    }
  }
}

}  // namespace nf::testing
