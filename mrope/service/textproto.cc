#include "mrope/service/textproto.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace mrope {
namespace {

// Keeps the first parse error (protobuf would otherwise log it).
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
#if GOOGLE_PROTOBUF_VERSION >= 22000000
  void RecordError(int line, google::protobuf::io::ColumnNumber column,
                   absl::string_view message) override {
    Keep(line, column, message);
  }
#else
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    Keep(line, column, message);
  }
#endif

  const std::string& error() const { return error_; }

 private:
  void Keep(int line, int column, absl::string_view message) {
    // Lines and columns are 0-based in the parser; people count from 1.
    if (error_.empty()) error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }

  std::string error_;
};

// protobuf reports an unknown field as `Message type "mrope.TokenRow" has no field named "idz".`:
// add the fields that type has.
std::string WithAcceptedFields(const std::string& error) {
  constexpr char kType[] = "Message type \"";
  const size_t start = error.find(kType);
  if (start == std::string::npos || !absl::StrContains(error, "has no field named")) return error;
  const size_t name_start = start + sizeof(kType) - 1;
  const size_t name_end = error.find('"', name_start);
  const google::protobuf::Descriptor* type =
      google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
          error.substr(name_start, name_end - name_start));
  if (type == nullptr) return error;
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  return absl::StrCat(error, " Accepted fields: ", absl::StrJoin(names, ", "), ".");
}

}  // namespace

absl::Status ParseTextproto(absl::string_view text, absl::string_view source,
                            google::protobuf::Message& message) {
  FirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &message)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":",
        errors.error().empty() ? "invalid text proto" : WithAcceptedFields(errors.error())));
  }
  return absl::OkStatus();
}

std::string ToTextproto(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(message, &text);
  return text;
}

bool IsTextprotoPath(absl::string_view path) {
  return absl::EndsWith(path, ".textproto") || absl::EndsWith(path, ".txtpb") ||
         absl::EndsWith(path, ".pbtxt");
}

}  // namespace mrope
