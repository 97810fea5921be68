#include "kernels/host_harness/access_model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "kernels/host_harness/host_runtime.h"

namespace mrope_host {
namespace {

constexpr int kWarpSize = 32;
constexpr int kBanks = 32;
constexpr uintptr_t kBankBytes = 4;
constexpr uintptr_t kSectorBytes = 32;
constexpr uintptr_t kLineBytes = 128;
constexpr int kNoBuffer = -1;

struct Buffer {
  uintptr_t begin;
  uintptr_t end;
  std::string name;
  std::vector<uint8_t> reads;  // per byte, saturating at 2
  std::vector<bool> written;
};

struct Site {
  std::string name;
  bool store;
  bool shared = false;
  std::set<int> buffers;
  SiteStats stats;
};

struct Record {
  uint32_t site;
  uint32_t warp;
  uint32_t instance;
  uint32_t lane;
  uintptr_t address;
  uint32_t bytes;
};

struct Model {
  std::vector<Buffer> buffers;
  std::vector<Site> sites;
  std::map<std::tuple<const char*, int, bool>, uint32_t> site_index;
  std::vector<std::vector<uint32_t>> instances;  // [thread][site] of the running block
  std::vector<Record> records;                   // of the running block
};

Model& State() {
  static Model* model = new Model;
  return *model;
}

std::string SiteName(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  std::string name = base != nullptr ? base + 1 : file;
  // The harness compiles kernels/<name>.cu as <name>_host.cc.
  if (const size_t host = name.rfind("_host.cc"); host != std::string::npos) {
    name = name.substr(0, host) + ".cu";
  }
  return name + ":" + std::to_string(line);
}

int BufferOf(Model& m, uintptr_t address) {
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (address >= m.buffers[i].begin && address < m.buffers[i].end) return static_cast<int>(i);
  }
  return kNoBuffer;
}

// Distinct units of `unit` bytes covered by the lanes' accesses.
uint64_t DistinctUnits(const std::vector<Record>& group, uintptr_t unit) {
  std::vector<uintptr_t> ids;
  for (const Record& r : group) {
    for (uintptr_t u = r.address / unit; u <= (r.address + r.bytes - 1) / unit; ++u) {
      ids.push_back(u);
    }
  }
  std::sort(ids.begin(), ids.end());
  return static_cast<uint64_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

// The most distinct 4-byte words in one bank, over the phases of a shared memory request.
int BankConflictWays(const std::vector<Record>& group) {
  uint32_t width = 0;
  for (const Record& r : group) width = std::max(width, r.bytes);
  const uint32_t lanes_per_phase = width <= 4 ? kWarpSize : 128 / width;
  int ways = 1;
  for (uint32_t phase = 0; phase < kWarpSize / lanes_per_phase; ++phase) {
    std::vector<uintptr_t> words[kBanks];
    for (const Record& r : group) {
      if (r.lane / lanes_per_phase != phase) continue;
      for (uintptr_t w = r.address / kBankBytes; w <= (r.address + r.bytes - 1) / kBankBytes;
           ++w) {
        std::vector<uintptr_t>& bank = words[w % kBanks];
        if (std::find(bank.begin(), bank.end(), w) == bank.end()) bank.push_back(w);
      }
    }
    for (const auto& bank : words) ways = std::max(ways, static_cast<int>(bank.size()));
  }
  return ways;
}

void AddGroup(Site& site, const std::vector<Record>& group) {
  SiteStats& s = site.stats;
  ++s.requests;
  s.requested_bytes += DistinctUnits(group, 1);
  if (site.shared) {
    s.max_ways = std::max(s.max_ways, BankConflictWays(group));
  } else {
    s.sectors += DistinctUnits(group, kSectorBytes);
    s.lines += DistinctUnits(group, kLineBytes);
  }
}

}  // namespace

void RecordAccess(const void* address, size_t bytes, bool is_store, const char* file,
                  int line) {
  Model& m = State();
  const auto [it, added] =
      m.site_index.try_emplace({file, line, is_store}, static_cast<uint32_t>(m.sites.size()));
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  if (added) {
    Site site;
    site.name = SiteName(file, line);
    site.store = is_store;
    site.shared = IsSharedMemory(address);
    m.sites.push_back(std::move(site));
  }
  Site& site = m.sites[it->second];
  const ThreadIndex& t = CurrentThread();
  const uint32_t thread =
      t.thread_idx.x + t.block_dim.x * (t.thread_idx.y + t.block_dim.y * t.thread_idx.z);
  if (m.instances.size() <= thread) m.instances.resize(thread + 1);
  std::vector<uint32_t>& counters = m.instances[thread];
  if (counters.size() <= it->second) counters.resize(it->second + 1);
  m.records.push_back({it->second, thread / kWarpSize, counters[it->second]++,
                       thread % kWarpSize, a, static_cast<uint32_t>(bytes)});
  if (site.shared) return;
  const int b = BufferOf(m, a);
  site.buffers.insert(b);
  if (b == kNoBuffer) return;
  Buffer& buffer = m.buffers[b];
  for (uintptr_t i = a - buffer.begin; i < a - buffer.begin + bytes && i < buffer.reads.size();
       ++i) {
    if (is_store) {
      buffer.written[i] = true;
    } else if (buffer.reads[i] < 2) {
      ++buffer.reads[i];
    }
  }
}

void EndBlockAccesses() {
  Model& m = State();
  std::sort(m.records.begin(), m.records.end(), [](const Record& x, const Record& y) {
    return std::tie(x.site, x.warp, x.instance, x.lane) <
           std::tie(y.site, y.warp, y.instance, y.lane);
  });
  std::vector<Record> group;
  for (size_t i = 0; i < m.records.size(); ++i) {
    group.push_back(m.records[i]);
    const bool last = i + 1 == m.records.size() || m.records[i + 1].site != group[0].site ||
                      m.records[i + 1].warp != group[0].warp ||
                      m.records[i + 1].instance != group[0].instance;
    if (last) {
      AddGroup(m.sites[group[0].site], group);
      group.clear();
    }
  }
  m.records.clear();
  m.instances.clear();
}

void NameBuffer(const void* data, size_t bytes, const std::string& name) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  State().buffers.push_back(
      {begin, begin + bytes, name, std::vector<uint8_t>(bytes), std::vector<bool>(bytes)});
}

void ForgetBuffers() { State().buffers.clear(); }

void StartRecording() {
  Model& m = State();
  m.sites.clear();
  m.site_index.clear();
  m.records.clear();
  m.instances.clear();
  for (Buffer& b : m.buffers) {
    std::fill(b.reads.begin(), b.reads.end(), 0);
    std::fill(b.written.begin(), b.written.end(), false);
  }
  access_recording = true;
}

AccessReport FinishRecording() {
  access_recording = false;
  Model& m = State();
  AccessReport report;
  // One row per site name: a header's line is one site in every kernel that includes it.
  std::map<std::tuple<std::string, bool>, size_t> row_of;
  for (const Site& site : m.sites) {
    const auto [it, added] = row_of.try_emplace({site.name, site.store}, report.sites.size());
    if (added) {
      SiteStats row;
      row.site = site.name;
      row.store = site.store;
      row.shared = site.shared;
      report.sites.push_back(row);
    }
    SiteStats& row = report.sites[it->second];
    row.requests += site.stats.requests;
    row.requested_bytes += site.stats.requested_bytes;
    row.sectors += site.stats.sectors;
    row.lines += site.stats.lines;
    row.max_ways = std::max(row.max_ways, site.stats.max_ways);
    for (int b : site.buffers) {
      const std::string name = b == kNoBuffer ? "params" : m.buffers[b].name;
      if (("," + row.buffers + ",").find("," + name + ",") == std::string::npos) {
        row.buffers += (row.buffers.empty() ? "" : ",") + name;
      }
    }
  }
  std::sort(report.sites.begin(), report.sites.end(), [](const SiteStats& x, const SiteStats& y) {
    return std::tie(x.site, x.store) < std::tie(y.site, y.store);
  });
  for (const Buffer& b : m.buffers) {
    BufferStats stats;
    stats.name = b.name;
    stats.bytes = b.end - b.begin;
    for (size_t i = 0; i < b.reads.size(); ++i) {
      stats.bytes_read += b.reads[i] > 0;
      stats.bytes_reread += b.reads[i] > 1;
      stats.bytes_written += b.written[i];
    }
    report.buffers.push_back(stats);
  }
  return report;
}

}  // namespace mrope_host
