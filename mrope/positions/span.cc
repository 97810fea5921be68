#include "mrope/positions/span.h"

namespace mrope {

const char* SpanKindName(SpanKind kind) {
  switch (kind) {
    case SpanKind::kText:
      return "text";
    case SpanKind::kImage:
      return "image";
    case SpanKind::kVideo:
      return "video";
    case SpanKind::kAudio:
      return "audio";
    case SpanKind::kAudioInVideo:
      return "audio_in_video";
  }
  return "unknown";
}

}  // namespace mrope
