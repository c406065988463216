// Axis and legend labels for the figures (report/figures.h): the part of each label that
// tells its rows apart, short enough to be read whole, never two rows with one label.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nf {

/// A label as named parts in display order, e.g. {{"subject", "sim"}, {"config",
/// "temperature=0.7"}, {"condition", "none"}, {"outcome", "pooled"}}. A part whose value is
/// "k1=v1,k2=v2,..." (every comma-separated piece has an '=') is read as one part per key
/// (named k1, k2, ...): a configuration string.
using LabelParts = std::vector<std::pair<std::string, std::string>>;

/// The labels of a set of figure rows (or legend entries) with what they share taken out.
///  labels  one per input row, in input order; equal inputs get equal labels and different
///          inputs different labels (a number in parentheses is added as a last resort);
///  full    one per input row: every part's value joined by " · " (the label before
///          shortening; the tooltip shows it);
///  names   the names of the parts the labels show, joined by " · " (an axis or legend
///          title), empty when the rows' parts differ in name or order;
///  common  the parts equal in every row as "name value" joined by "; " (the figure's
///          subtitle says them once), empty when none.
struct ShortLabels {
  std::vector<std::string> labels;
  std::vector<std::string> full;
  std::string names;
  std::string common;
};

/// Longest label, in characters (UTF-8 code points), before middle truncation.
constexpr size_t kMaxLabelChars = 56;

/// Returns the rows' labels keeping only the parts that differ between rows: when every row
/// has the same part names in the same order, the parts equal in every row are dropped
/// (named in `common`); otherwise the words (split at " · ") shared as a prefix or suffix by
/// every row are dropped. A configuration part shows "key=value", or only "value" (the key in
/// `names`) when a label would exceed kMaxLabelChars. A label still longer is cut in the
/// middle ("first…last", full text in `full`); a cut that would make two labels equal is not
/// made. At least one part is always kept. Pure function; empty input gives empty output.
ShortLabels short_labels(const std::vector<LabelParts>& rows);

/// `text` cut to at most `max_chars` code points by replacing its middle with "…" (UTF-8
/// safe; max_chars < 3 is taken as 3). Unchanged when it fits.
std::string middle_truncate(const std::string& text, size_t max_chars = kMaxLabelChars);

}  // namespace nf
