#include "cli/conventions_command.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "cli/output.h"
#include "mrope/model/conventions.h"
#include "mrope/model/model_family.h"

namespace mrope {
namespace {

// The aliases of an entry's convention: its short name and the family's preset under it.
std::string Aliases(const ConventionRelease& entry) {
  const auto preset = ConventionPreset(entry.family, entry.convention);
  return absl::StrCat(ConventionName(entry.convention), ", ", preset.ok() ? *preset : "");
}

std::string Range(const ConventionRelease& entry) {
  if (entry.first.empty()) return "(no release verified)";
  return entry.first == entry.last ? std::string(entry.first)
                                   : absl::StrCat(entry.first, " to ", entry.last);
}

absl::StatusOr<std::string> Json() {
  google::protobuf::ListValue list;
  for (const ConventionRelease& entry : ConventionReleases()) {
    auto& fields = *list.add_values()->mutable_struct_value()->mutable_fields();
    const auto preset = ConventionPreset(entry.family, entry.convention);
    fields["family"].set_string_value(std::string(ModelFamilyName(entry.family)));
    fields["name"].set_string_value(std::string(ConventionReleaseName(entry.convention)));
    auto& aliases = *fields["aliases"].mutable_list_value();
    aliases.add_values()->set_string_value(std::string(ConventionName(entry.convention)));
    if (preset.ok()) aliases.add_values()->set_string_value(*preset);
    fields["reference"].set_string_value(std::string(ConventionReference(entry.convention)));
    for (const auto& [key, value] : {std::make_pair("first", entry.first),
                                     std::make_pair("last", entry.last)}) {
      if (value.empty()) {
        fields[key].set_null_value(google::protobuf::NULL_VALUE);
      } else {
        fields[key].set_string_value(std::string(value));
      }
    }
    fields["verified"].set_string_value(std::string(entry.verified));
  }
  std::string json;
  const auto printed = google::protobuf::util::MessageToJsonString(list, &json);
  if (!printed.ok()) return absl::InternalError(std::string(printed.message()));
  return absl::StrCat(json, "\n");
}

// The README's table (README.md, "Conventions by release"; tests/cli checks it is this).
std::string Markdown() {
  std::string text =
      "| family | convention (aliases) | releases reproduced | verified by |\n"
      "| --- | --- | --- | --- |\n";
  for (const ConventionRelease& entry : ConventionReleases()) {
    const auto preset = ConventionPreset(entry.family, entry.convention);
    absl::StrAppend(&text, "| `", ModelFamilyName(entry.family), "` | `",
                    ConventionReleaseName(entry.convention), "` (`",
                    ConventionName(entry.convention), "`, `", preset.ok() ? *preset : "",
                    "`) | ", ConventionReference(entry.convention), " ", Range(entry), " | ",
                    entry.verified, " |\n");
  }
  return text;
}

}  // namespace

absl::Status RunConventions(const CliOptions& options, std::ostream& out) {
  if (options.format == "json") {
    auto json = Json();
    if (!json.ok()) return json.status();
    return WriteOutput(options.output, *json, out);
  }
  if (options.format == "markdown") return WriteOutput(options.output, Markdown(), out);
  if (!options.format.empty() && options.format != "text") {
    return absl::InvalidArgumentError(absl::StrCat(
        "conventions: --format must be text, json or markdown, got '", options.format, "'"));
  }
  std::string text = absl::StrFormat("%-16s %-18s %-36s %-18s %s\n", "family", "convention",
                                     "aliases", "releases", "verified");
  for (const ConventionRelease& entry : ConventionReleases()) {
    absl::StrAppend(&text, absl::StrFormat("%-16s %-18s %-36s %-18s %s\n",
                                           ModelFamilyName(entry.family),
                                           ConventionReleaseName(entry.convention),
                                           Aliases(entry),
                                           absl::StrCat(ConventionReference(entry.convention),
                                                        " ", Range(entry)),
                                           entry.verified));
  }
  return WriteOutput(options.output, text, out);
}

}  // namespace mrope
