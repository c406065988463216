// The chat condition truncate_last_turn of seed 004 §2.3: the latter half of the final
// user turn is removed (sentence-aware), so that key details are missing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// The result of truncate_last_turn.
struct TruncatedTurn {
  std::vector<ChatMessage> messages;  // the conversation with the last turn replaced by `kept`
  std::string kept;                   // the kept prefix of the last turn (trailing whitespace trimmed)
  std::string removed;                // the removed rest (leading whitespace trimmed)
  int sentences_total = 0;            // sentences in the last turn (split_sentences)
  int sentences_kept = 0;             // complete sentences kept (0 for a word or mid-word cut)
  std::string cut;                    // "sentence_boundary" | "word_boundary" | "mid_word"
  std::string trunc_form;             // "complete" (sentence_boundary) | "midword" (the others)
  size_t removed_chars = 0;           // code points of `removed`

  /// {"condition": "truncate_last_turn", "cut", "trunc_form", "sentences_total",
  ///  "sentences_kept", "removed_chars"}: stored with the draw (Draw::extra).
  nlohmann::json detail() const;
};

/// Splits `text` into sentences; returns [begin, end) byte offsets into `text`, each
/// sentence without surrounding whitespace, in order. Rules (deterministic, ASCII
/// punctuation, UTF-8 safe: only ASCII bytes are inspected):
///  - a run of '.', '!' or '?' ends a sentence when followed (after optional closing
///    quotes/brackets ' " ) ] and the UTF-8 ’ ”) by whitespace or the end of the text;
///    so decimals ("2.5 mg") and "U.S" never split;
///  - a paragraph end (a line break followed by a blank line) ends a sentence;
///  - a single '.' after a title (Dr, Mr, Mrs, Ms, Prof, St) never ends a sentence, and a
///    single '.' after another common abbreviation (e.g, i.e, etc, vs, approx, mg, mcg,
///    ml, kg, cm, mm, hr, hrs, min, wk, wks, yr, yrs, no, cf, fig, al, tab, tabs) does not
///    end one when the next word starts with a lowercase letter or a digit;
///  - text after the last terminator is a final sentence.
/// Whitespace is ASCII space, \t, \n, \r, \f, \v. Empty or blank text -> no sentences.
std::vector<std::pair<size_t, size_t>> split_sentences(std::string_view text);

/// Removes the latter half of the final user turn (seed 004 §2.3, "sentence-aware split").
/// Rule, with n = split_sentences(turn).size():
///  - n >= 2: keep the first floor(n/2) sentences (2 -> 1, 3 -> 1, 4 -> 2, 5 -> 2);
///    cut = "sentence_boundary", trunc_form = "complete";
///  - n == 1 with two or more words: cut at the word boundary (the end of a word) nearest
///    the middle code point of the sentence, ties to the earlier boundary, so at least one
///    word is kept and one removed; cut = "word_boundary", trunc_form = "midword" (the
///    kept text is a grammatically incomplete sentence, as the released audit's
///    "midword" form of seed 004 §2.3/§3.1);
///  - n == 1, a single word: keep its first floor(c/2) code points (c = code points,
///    never inside a UTF-8 sequence); cut = "mid_word", trunc_form = "midword".
/// `kept` is a prefix of the turn with trailing whitespace trimmed; `removed` is the rest
/// with leading whitespace trimmed, so turn == kept + (whitespace) + removed. Earlier
/// messages are unchanged. Deterministic; no randomness.
/// Errors (InvalidArgument): no messages; the last message is not "user"; the last turn
/// is empty or whitespace only, or a single code point (nothing to remove).
Result<TruncatedTurn> truncate_last_turn(const std::vector<ChatMessage>& messages);

}  // namespace nf
