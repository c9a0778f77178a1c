// verify's compact table of every object (object_table.h).
#include "store/verify/object_table.h"

#include <stdexcept>
#include <utility>

namespace kistore::verifying {

std::uint32_t DigestTable::intern(const Digest& d) {
  Shard& shard = shards_[d.bytes()[0]];
  std::lock_guard lock(shard.mutex);
  if (shard.digests.size() >= 0xffffffu) throw std::length_error("verify: more than 16,777,215 digests named in one shard");
  auto [place, added] = shard.ids.insert(d, static_cast<std::uint32_t>(shard.digests.size()),
                                         [&](std::uint32_t i) -> const Digest& { return shard.digests[i]; });
  if (added) shard.digests.push_back(d);
  return (std::uint32_t{d.bytes()[0]} << 24) | place;
}

Primary MeasurementKinds::primary(const std::optional<Measurement>& m) const {
  if (!m) return {};
  // The last triple this thread met, for this table.
  thread_local std::uint64_t last_table = 0;
  thread_local std::uint32_t last_kind = kNone;
  thread_local Measurement last;
  if (last_table == serial_ && last.metric == m->metric && last.statistic == m->statistic && last.unit == m->unit)
    return {m->value, last_kind};
  std::uint32_t kind = kNone;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < kinds_.size() && kind == kNone; ++i)
      if (kinds_[i].metric == m->metric && kinds_[i].statistic == m->statistic && kinds_[i].unit == m->unit)
        kind = static_cast<std::uint32_t>(i);
    if (kind == kNone) {
      if (kinds_.size() >= kNone - 1) throw std::length_error("verify: too many kinds of measurement");
      kind = static_cast<std::uint32_t>(kinds_.size());
      kinds_.push_back({m->metric, m->statistic, m->unit, 0});
    }
  }
  last_table = serial_, last_kind = kind, last = {m->metric, m->statistic, m->unit, 0};
  return {m->value, kind};
}

std::optional<Measurement> MeasurementKinds::measurement(const Primary& p) const {
  if (p.kind == kNone) return std::nullopt;
  std::lock_guard lock(mutex_);
  Measurement m = kinds_.at(p.kind);
  m.value = p.value;
  return m;
}

void ObjectTable::put(ObjectFacts&& facts) {
  const Digest& digest = *facts.digest;
  Shard& shard = shards_[digest.bytes()[0]];
  StoredObject o;
  o.valid = facts.valid();
  o.kind = facts.kind;
  o.default_level = facts.default_level;
  if (o.valid && facts.kind == Kind::kRun) {
    o.primary = kinds.primary(facts.primary);
    o.key = digests.intern(facts.key);
    for (std::size_t i = 0; i < o.references.size(); ++i) o.references[i] = digests.intern(facts.references.by_role[i]);
  }
  std::lock_guard lock(shard.mutex);
  if (o.valid && facts.kind == Kind::kRun && facts.source_path) {
    if (facts.source_path->size() >= kNone) throw std::length_error("verify: a source key of 4 GiB");
    o.source_at = shard.text.size();
    o.source_size = static_cast<std::uint32_t>(facts.source_path->size());
    shard.text += *facts.source_path;
  }
  if (o.valid && facts.kind == Kind::kAttestation)
    shard.attestations.insert_or_assign(digest, Attested{facts.subject, std::move(facts.attestation_bytes)});
  if (shard.entries.size() >= kNone - 1) throw std::length_error("verify: more than 4,294,967,294 objects in one shard");
  auto [place, added] = shard.slots.insert(digest, static_cast<std::uint32_t>(shard.entries.size()),
                                           [&](std::uint32_t i) -> const Digest& { return shard.entries[i].digest; });
  if (added) shard.entries.push_back({digest, o});
  else shard.entries[place].object = o;
}

const StoredObject* ObjectTable::find(const Digest& d) const {
  const Shard& shard = shards_[d.bytes()[0]];
  const std::uint32_t place = shard.slots.find(d, [&](std::uint32_t i) -> const Digest& { return shard.entries[i].digest; });
  return place == kNone ? nullptr : &shard.entries[place].object;
}

StoredObject* ObjectTable::find(const Digest& d) {
  return const_cast<StoredObject*>(std::as_const(*this).find(d));
}

std::optional<std::string_view> ObjectTable::source(const Digest& d, const StoredObject& o) const {
  if (o.source_size == kNone) return std::nullopt;
  return std::string_view(shards_[d.bytes()[0]].text).substr(o.source_at, o.source_size);
}

ObjectFacts ObjectTable::facts(const Digest& d, const StoredObject& o) const {
  ObjectFacts f;
  f.digest = d;
  if (!o.valid) f.problem = Problem{ProblemKind::kObjectInvalid, object_path(d), "(reported where it is stored)"};
  f.kind = o.kind;
  f.default_level = o.default_level;
  if (o.valid && o.kind == Kind::kRun) {
    f.primary = kinds.measurement(o.primary);
    f.group_bytes = group_entry(f.primary);
    f.key = digests.get(o.key);
    for (std::size_t i = 0; i < o.references.size(); ++i) f.references.by_role[i] = digests.get(o.references[i]);
    if (auto s = source(d, o)) f.source_path = std::string(*s);
  }
  if (o.valid && o.kind == Kind::kAttestation) {
    const auto& attested = shards_[d.bytes()[0]].attestations;
    if (auto it = attested.find(d); it != attested.end()) {
      f.subject = it->second.subject;
      f.attestation_bytes = it->second.bytes;
    }
  }
  return f;
}

std::optional<ObjectFacts> ObjectTable::facts(const Digest& d) const {
  const StoredObject* o = find(d);
  return o ? std::optional<ObjectFacts>(facts(d, *o)) : std::nullopt;
}

std::size_t ObjectTable::size() const {
  std::size_t n = 0;
  for (const Shard& shard : shards_) n += shard.entries.size();
  return n;
}

void ObjectTable::clear() {
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    std::deque<Entry>().swap(shard.entries);
    shard.slots.clear();
    std::string().swap(shard.text);
    shard.attestations.clear();
  }
}

}  // namespace kistore::verifying
