// truncate_last_turn and split_sentences (perturb/truncate.h; seed 004 §2.3). Lives in
// tests/task because tests/CMakeLists.txt has no perturb suite (test_task links nf_perturb).
#include "perturb/truncate.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/rng.h"

namespace nf {
namespace {

std::vector<ChatMessage> turn(const std::string& text) { return {{"user", text}}; }

std::vector<std::string> sentences_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto [b, e] : split_sentences(text)) out.push_back(text.substr(b, e - b));
  return out;
}

TEST(SplitSentences, TerminatorsAbbreviationsDecimalsParagraphs) {
  EXPECT_EQ(sentences_of("I have a cough. Should I worry?"),
            (std::vector<std::string>{"I have a cough.", "Should I worry?"}));
  EXPECT_EQ(sentences_of("My temperature is 38.5 today. It was 37.2 yesterday."),
            (std::vector<std::string>{"My temperature is 38.5 today.", "It was 37.2 yesterday."}));
  EXPECT_EQ(sentences_of("I take 5 mg. daily with food. Dr. Smith said it is fine. Should I stop?"),
            (std::vector<std::string>{"I take 5 mg. daily with food.", "Dr. Smith said it is fine.", "Should I stop?"}));
  EXPECT_EQ(sentences_of("Use a mild soap, e.g. unscented ones. Avoid hot water, i.e. keep it warm."),
            (std::vector<std::string>{"Use a mild soap, e.g. unscented ones.", "Avoid hot water, i.e. keep it warm."}));
  // An abbreviation followed by a capitalised word does end the sentence (titles excepted).
  EXPECT_EQ(sentences_of("I take 5 mg. Then I feel dizzy."),
            (std::vector<std::string>{"I take 5 mg.", "Then I feel dizzy."}));
  EXPECT_EQ(sentences_of("He said \"stop.\" Then he left."),
            (std::vector<std::string>{"He said \"stop.\"", "Then he left."}));
  EXPECT_EQ(sentences_of("Really?! Yes... maybe"), (std::vector<std::string>{"Really?!", "Yes...", "maybe"}));
  EXPECT_EQ(sentences_of("Age 45\n\nSymptoms: cough\n  \nWhat now"),
            (std::vector<std::string>{"Age 45", "Symptoms: cough", "What now"}));
  EXPECT_EQ(sentences_of("line one\nline two"), (std::vector<std::string>{"line one\nline two"}));
  EXPECT_EQ(sentences_of("Es tut weh. Was tun?"), (std::vector<std::string>{"Es tut weh.", "Was tun?"}));
  EXPECT_TRUE(sentences_of(" \n\t ").empty());
  EXPECT_TRUE(sentences_of("").empty());
}

struct SentenceCase {
  std::string text;
  std::string kept;
  std::string removed;
  int total;
  int kept_n;
};

TEST(TruncateLastTurn, KeepsFloorHalfOfTheSentences) {
  const SentenceCase cases[] = {
      {"I have a cough. Should I worry?", "I have a cough.", "Should I worry?", 2, 1},
      {"A b. C d! E f?", "A b.", "C d! E f?", 3, 1},
      {"One. Two. Three. Four.", "One. Two.", "Three. Four.", 4, 2},
      {"S1 x. S2 x. S3 x. S4 x. S5 x.", "S1 x. S2 x.", "S3 x. S4 x. S5 x.", 5, 2},
      {"I take 5 mg. daily with food. Dr. Smith said it is fine. Should I stop?", "I take 5 mg. daily with food.",
       "Dr. Smith said it is fine. Should I stop?", 3, 1},
      {"Fever 38.5 since Monday.  \n\nShould I go in?\n", "Fever 38.5 since Monday.", "Should I go in?\n", 2, 1},
  };
  for (const auto& c : cases) {
    auto r = truncate_last_turn(turn(c.text));
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().message();
    EXPECT_EQ(r->kept, c.kept) << c.text;
    EXPECT_EQ(r->removed, c.removed) << c.text;
    EXPECT_EQ(r->sentences_total, c.total) << c.text;
    EXPECT_EQ(r->sentences_kept, c.kept_n) << c.text;
    EXPECT_EQ(r->cut, "sentence_boundary");
    EXPECT_EQ(r->trunc_form, "complete");
    EXPECT_EQ(r->messages.back().content, c.kept);
  }
}

TEST(TruncateLastTurn, SingleSentenceCutsAtTheWordBoundaryNearestTheMiddle) {
  // 24 code points, middle 12; word ends at 4, 10, 17, 19 -> 10 is nearest.
  auto r = truncate_last_turn(turn("What cream should I buy?"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kept, "What cream");
  EXPECT_EQ(r->removed, "should I buy?");
  EXPECT_EQ(r->sentences_total, 1);
  EXPECT_EQ(r->sentences_kept, 0);
  EXPECT_EQ(r->cut, "word_boundary");
  EXPECT_EQ(r->trunc_form, "midword");
  EXPECT_EQ(r->removed_chars, 13u);
  // A tie (9 code points, middle 4.5; word ends at 3 and 6) goes to the earlier boundary.
  auto t = truncate_last_turn(turn("abc de fg"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kept, "abc");
  EXPECT_EQ(t->removed, "de fg");
  // Two words: the first is kept.
  auto two = truncate_last_turn(turn("Hello doctor"));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->kept, "Hello");
  // Multibyte: the midpoint counts code points, not bytes (ü, é are two bytes each).
  auto mb = truncate_last_turn(turn("Übelkeit, Müdigkeit und Schwindel seit gestern"));
  ASSERT_TRUE(mb.ok());  // 46 code points, middle 23; word ends at 9, 19, 23, 33, 38
  EXPECT_EQ(mb->kept, "Übelkeit, Müdigkeit und");
  EXPECT_EQ(mb->removed, "Schwindel seit gestern");
}

TEST(TruncateLastTurn, SingleWordCutsAtTheMiddleCodePoint) {
  auto r = truncate_last_turn(turn("Hyperkalemia"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kept, "Hyperk");
  EXPECT_EQ(r->removed, "alemia");
  EXPECT_EQ(r->cut, "mid_word");
  EXPECT_EQ(r->trunc_form, "midword");
  // 13 code points (ä is two bytes): keep 6, never inside the UTF-8 sequence.
  auto de = truncate_last_turn(turn("Schläfrigkeit"));
  ASSERT_TRUE(de.ok());
  EXPECT_EQ(de->kept, "Schläf");
  EXPECT_EQ(de->removed, "rigkeit");
  // No ASCII terminator and no space: one "word" of six 3-byte code points.
  auto ja = truncate_last_turn(turn("頭が痛いです"));
  ASSERT_TRUE(ja.ok());
  EXPECT_EQ(ja->kept, "頭が痛");
  EXPECT_EQ(ja->removed, "いです");
  EXPECT_EQ(ja->removed_chars, 3u);
}

TEST(TruncateLastTurn, EarlierMessagesAreUnchangedAndDetailIsRecorded) {
  std::vector<ChatMessage> m = {{"system", "Be careful."}, {"user", "Hi."}, {"assistant", "Hello. How can I help?"},
                                {"user", "I feel dizzy. It started today. I take 2.5 mg of something. What is it?"}};
  auto r = truncate_last_turn(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->messages.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->messages[i].role, m[i].role);
    EXPECT_EQ(r->messages[i].content, m[i].content);
  }
  EXPECT_EQ(r->messages[3].role, "user");
  EXPECT_EQ(r->messages[3].content, "I feel dizzy. It started today.");
  const auto d = r->detail();
  EXPECT_EQ(d["condition"], "truncate_last_turn");
  EXPECT_EQ(d["cut"], "sentence_boundary");
  EXPECT_EQ(d["trunc_form"], "complete");
  EXPECT_EQ(d["sentences_total"], 4);
  EXPECT_EQ(d["sentences_kept"], 2);
  EXPECT_EQ(d["removed_chars"], std::string("I take 2.5 mg of something. What is it?").size());
}

TEST(TruncateLastTurn, Errors) {
  auto none = truncate_last_turn({});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  auto asst = truncate_last_turn({{"user", "Q?"}, {"assistant", "A."}});
  ASSERT_FALSE(asst.ok());
  EXPECT_NE(asst.status().message().find("found 'assistant'"), std::string::npos) << asst.status().message();
  auto blank = truncate_last_turn(turn(" \n\t "));
  ASSERT_FALSE(blank.ok());
  EXPECT_EQ(blank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(blank.status().message().find("empty"), std::string::npos);
  auto empty = truncate_last_turn(turn(""));
  ASSERT_FALSE(empty.ok());
  auto one = truncate_last_turn(turn("?"));
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("single character"), std::string::npos);
}

bool all_space(const std::string& s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
  return true;
}

TEST(TruncateLastTurn, PropertiesOverRandomText) {
  const std::vector<std::string> words = {"pain", "since", "Monday", "2.5", "mg.", "e.g.", "Dr.", "fever?", "cough!",
                                          "Übelkeit", "頭痛", "ok.", "\"yes.\"", "it's", "x", "(note)", "end..."};
  const std::vector<std::string> gaps = {" ", " ", " ", "  ", "\n", "\n\n", "\t", " \n \n"};
  Rng rng(20261130);
  int ran = 0, sentence = 0, word = 0, mid = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    if (rng.uniform() < 0.3) text += gaps[rng.uniform_int(gaps.size())];
    const int n = 1 + static_cast<int>(rng.uniform_int(25));
    for (int i = 0; i < n; ++i) {
      if (i > 0) text += gaps[rng.uniform_int(gaps.size())];
      text += words[rng.uniform_int(words.size())];
    }
    if (rng.uniform() < 0.3) text += gaps[rng.uniform_int(gaps.size())];
    auto r = truncate_last_turn(turn(text));
    if (!r.ok()) {  // only a one-code-point turn has nothing to remove
      EXPECT_EQ(text.find_first_not_of(" \t\n"), text.find_last_not_of(" \t\n")) << text;
      continue;
    }
    ++ran;
    ASSERT_FALSE(r->kept.empty()) << text;
    ASSERT_FALSE(r->removed.empty()) << text;
    ASSERT_LT(r->kept.size(), text.size()) << text;
    ASSERT_EQ(text.compare(0, r->kept.size(), r->kept), 0) << text;  // a strict prefix
    // kept + whitespace + removed reconstructs the original.
    const size_t gap_len = text.size() - r->kept.size() - r->removed.size();
    ASSERT_LE(r->kept.size() + r->removed.size(), text.size()) << text;
    ASSERT_TRUE(all_space(text.substr(r->kept.size(), gap_len))) << text;
    ASSERT_EQ(text.substr(r->kept.size() + gap_len), r->removed) << text;
    // Never inside a UTF-8 sequence.
    ASSERT_NE(static_cast<unsigned char>(r->removed[0]) & 0xC0, 0x80) << text;
    EXPECT_FALSE(all_space(r->kept.substr(r->kept.size() - 1))) << text;
    const auto sents = split_sentences(text);
    ASSERT_EQ(r->sentences_total, static_cast<int>(sents.size())) << text;
    if (r->cut == "sentence_boundary") {
      ++sentence;
      EXPECT_EQ(r->sentences_kept, r->sentences_total / 2) << text;
      EXPECT_EQ(r->kept.size(), sents[static_cast<size_t>(r->sentences_kept) - 1].second) << text;
    } else {
      EXPECT_EQ(r->sentences_total, 1) << text;
      (r->cut == "word_boundary" ? word : mid) += 1;
      EXPECT_EQ(r->trunc_form, "midword");
    }
    // Deterministic.
    auto again = truncate_last_turn(turn(text));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->kept, r->kept);
  }
  EXPECT_GT(ran, 2500);
  EXPECT_GT(sentence, 100);  // every branch is exercised
  EXPECT_GT(word, 10);
  EXPECT_GT(mid, 5);
}

}  // namespace
}  // namespace nf
