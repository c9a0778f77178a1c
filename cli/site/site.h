// `kistore site OUT/`: the store as a static web site, readable offline
// from the folder itself (file://) or from any web server, with no request
// to anywhere else.
//
// What it writes: index.html (every comparison group, by benchmark then GPU,
// with a filter by kernel, GPU, pass and implementation; `kistore groups
// --json` lists them as data), a page per comparison group (groups/<hex>.html: its
// ranking, a row per run with a bar, a correctness column where its runs'
// harnesses say whether they checked the output, each series of 2 or more
// runs drawn over time (an inline SVG with its spread, change points and
// reruns; cli/site/site_series.cc)), per benchmark definition
// (benchmarks/<id>.html), about.html, style.css and site.js, and each
// document the runs name (protocol, environment, workload, implementation)
// once, as documents/<hex>.json (what `show DIGEST --canonical` prints). A
// run has no page of its own: its record is its row of its group's ranking,
// <tr id="run-<12 hex>">, whose last cell opens on its whole digest and what
// distinguishes it (cli/site/site_run_section.cc), readable without a script
// and from file://. What every run of a group states alike is said once,
// above its runs; members of a run's record that restate others are left out
// (`kistore show RUN` prints the whole record, `kistore rank KEY --json` a
// group). The pages show every string cut with "…" (objects/shown_text.h);
// a run whose record cuts one has its whole JSON (the "run" member of `show
// RUN --canonical`) as runs/<hex>.json. So a site grows by under a kilobyte a
// run (docs/benchmarks.md: a million runs fit GitHub Pages' 1 GB) and never
// with (runs naming a document) × (its size).
//
// Rebuilding into the same folder rewrites only the files whose bytes
// changed (site-manifest.json records the sha256 of each file written) and
// removes the files an earlier build wrote that this one does not; a page
// names no build time, so a page changes only when its evidence does. The
// manifest also records each page's key (a digest of what the page is
// rendered from, cli/site/site_keys.cc): a rebuild does not render a page whose
// key is unchanged and whose file is in place, so that a rebuild after one
// add costs the gathering of the evidence and the pages that changed.
//
// Thread-safety: one call at a time per Store. It reads one commit of the
// store, on every core (objects/parallel.h): its other threads read through
// Stores of their own, opened on store.dir().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "store/core/store.h"

namespace kistore::cli {

struct SiteOptions {
  std::string out_dir;
  // Where the site is published ("https://example.org/evidence/"): each group
  // page then names its runs' permalinks there; empty: about.html says how to cite.
  std::string base_url;
};

struct SiteReport {
  std::size_t files = 0;      // files the site holds
  std::size_t written = 0;    // files written by this build (new or changed)
  std::size_t removed = 0;    // files an earlier build wrote that this one does not
  std::size_t runs = 0, groups = 0, benchmarks = 0;
  // What a rebuild left alone and why: entries of the old manifest that are
  // not paths beneath the folder, name links or files changed since.
  std::vector<std::string> warnings;
};

// Builds the site of `store`'s head into options.out_dir (created if
// missing), judging signatures and levels against `trust`. `progress(done,
// total)` is called as pages are written. Error(kInvalidInput) when out_dir
// exists, is not empty and holds no site-manifest.json (so that a typo
// never overwrites a folder of other files), or holds a manifest that is
// not one; Error(kInvalidInput) naming the link when out_dir, a folder of
// the site or its manifest is a symbolic link (every file is written and
// removed beneath out_dir through store/edge/beneath.h, never through a link);
// entries of an earlier manifest that it leaves (not beneath the folder,
// links, files changed since) are named in SiteReport::warnings;
// Error(kIO) naming the file when a file cannot be written;
// errors of the store's reads pass through.
SiteReport build_site(const Store& store, const std::vector<AllowedSigner>& trust, const SiteOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& progress = nullptr);

}  // namespace kistore::cli
