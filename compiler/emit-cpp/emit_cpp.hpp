// The C++ back-end: ScalarPrograms (compiler/specialise) -> one header and one source file
// per robot and kernel set.
//
// Contract
// - Both files start with a provenance banner: the soac version, the robot (name, file and
//   its hash), the gravity the code was specialised for, and per kernel its source
//   expression, the derivation summary the caller passes in (the rewritten form and the
//   identities used) and its operation count. The header then states the conventions a
//   caller needs, once: the joint-space order (each joint's q and qd indices), the
//   free-flyer's q and qd layout, [angular; linear] spatial vectors, the tips (in order,
//   and the frame their rows are expressed in), the bodies when a port is per body, and
//   gravity; and per kernel what its input and output rows and columns are.
// - The header declares, in `namespace soa_gen::<prefix>`: the robot's sizes (nq, nv, tips),
//   one function per kernel on plain arrays, `void NAME(const double* q, ..., double* out)`,
//   and (unless SOA_GEN_NO_EIGEN is defined) overloads on fixed-size Eigen vectors and
//   matrices (an output of more than 128 KB, Eigen's default bound on fixed sizes, is an
//   Eigen::MatrixXd of its size); and one
//   `extern "C" void <prefix>_<kernel>(const double* in, double* out)` per kernel whose
//   comment documents the layout: inputs concatenated in declared order, operator-valued
//   outputs column-major (exec::Layout). <prefix> is Target::robot: by default
//   identifier() of the URDF robot name, or what `soac emit --name` gives.
// - Names: the prefix and every kernel name must be usable (specialise/kernel.hpp,
//   check_name: a C identifier, not a C or C++ keyword, not reserved -- the symbols
//   <prefix>_<kernel> live at global scope -- and the prefix not `std`, `Eigen` or
//   `soa_gen`, which the generated code names); else UserError. The
//   generated namespace soa_gen::<prefix> holds nq, nv, tips, soa_sincos and
//   soa_sincos_pair, soa_sincos_libm besides the kernels; a kernel of one of these names is
//   a UserError too.
// - Text from outside (robot, link, joint and frame names, file paths, expressions,
//   derivations, labels) reaches the output only inside `//` comments, and only through
//   specialise::comment_safe(): nothing read from a file can end a comment line or splice
//   the next line into it.
// - Sources (CppOptions): `sources` files, <stem>.cpp when one, else <stem>_1.cpp ...
//   <stem>_<n>.cpp, each with the banner and the functions assigned to it -- heaviest first,
//   each to the source with the fewest operations so far -- declaring those of other
//   sources it calls (in namespace soa_gen::<prefix>::detail). A source with nothing
//   assigned holds the banner and an empty namespace. Compile and link them all.
// - Straight-line code: one `const double` per operation, in the program's order (but for
//   the sin-cos pairs below), with a comment line wherever the body or operator factor
//   changes; literals print to round-trip exactly; no dead code (the program has none);
//   unused parameters are marked (void). What the code is cut into:
//   - Sharing: what at least `share_min_ops` operations of several kernels compute alike
//     (specialise::share: the joints' sines and cosines, the Riccati sweep) is a function
//     detail::shared<j> of its own, run by each kernel using it into its array `s`.
//   - Parts: a kernel or shared program of more than `part_ops` operations is cut in
//     program order into functions detail::<name>_part<k> of that many (specialise::
//     partition), [[gnu::noinline]], called in order; a value a later part reads goes
//     through the caller's stack array `w`. Why: g++'s time and memory grow faster than the
//     length of a function; cut, they grow linearly in the code (docs/performance.md).
//     Parts and shared programs take `s` and `w` as `soa_own` / `soa_own_in`: restrict
//     pointers where the source is compiled with AVX (nothing else reaches the kernel's own
//     arrays), plain ones otherwise (there g++'s code measured longer); never the caller's.
//   - Dot tables: a kernel without lane groups (below) whose sums of products (Gram
//     entries) have at least `dot_min_terms` products computes them by a loop,
//     detail::<name>_dots, over constant tables of runs of its array `g` of factors
//     (specialise/dot_table.hpp), which the parts fill; O(N^2 depth) lines become O(N^2)
//     table rows.
//   - Step loops: a kernel of at least `loop_min_ops` operations runs the steps it repeats
//     column after column (specialise/step_loops.hpp) as loops, a part each: the step's
//     operations written once, `for (const auto& soa_row : soa_table)`, each row where one
//     step reads its varying inputs in `w` and where its values go (w, g, the output).
//     O(N depth) copies of a step become O(N depth) rows. In a kernel set of at least
//     `large_set_ops` operations, per-body loops too, in kernels and shared programs: the
//     steps alike up to their bodies' literals and input indices (a sweep's step at bodies
//     of one joint type, each reading the one before), the differing literals a second table
//     `soa_literals`, one row per body, read through `soa_lit`.
//     Where its loops would run fewer than `loop_min_instances` steps each on average, the
//     kernel is written out instead (with packs, below).
//   - Lane groups: a kernel of at least `lane_min_ops` operations computes its sums of
//     products that share a factor term by term (specialise/lanes.hpp: Gram entries, rows
//     of one column; -calM^-1 d tau) `lanes` entries at a time when their vectors are
//     mostly full (2 of 3 lanes a step or more) and they take at most `lane_max_steps` steps
//     (else a dot table, as above), in functions detail::<name>_lanes<k> of about
//     `part_ops` steps from its array `g` of factors, which the parts fill. GCC/Clang
//     vector extensions: `typedef double soa_v4 __attribute__((vector_size(32)))`; the
//     lanes' factors as a table soa_x of 4-vectors, then per group an accumulator soa_acc
//     starting at -0.0 and one multiply and add per step, blended where a lane has no term.
//   - Columns: where a kernel's lane groups are a dense product column by column (each
//     column's rows, at least `column_min_rows`, sharing every term's factor: -calM^-1 d tau;
//     specialise::lane_columns), they are one function detail::<name>_columns instead: its
//     tables (per column its terms; per term its vector of the rows' factors and its own
//     factor's index in g), the vectors gathered once into soa_x, then per column one loop
//     over its terms with all rows' accumulators in vector registers: 8 lanes under
//     __AVX512F__, 4 under __AVX__, else 2 (the same operations per lane, so the same bits).
//   - Packs: a kernel of at least `step_lane_min_ops` operations written out (below
//     `loop_min_ops`, or as above) computes the steps it repeats column after column
//     `step_lanes` columns at a time (step_loops.hpp, packs), and then the steps alike at
//     several bodies up to their literals and input entries (packs of bodies): `const soa_p4
//     pK_t = ...;` one 4-wide vector operation per node of the step, lane k the k-th column
//     or body, operands every lane reads alike as one scalar, literals that differ as one
//     vector literal, an earlier pack's values passed on as its vector (or soa_shuffle<...> of it),
//     through `w` as 4 slots side by side (soa_load(w + s)); the lane groups' factors a pack
//     computes are 4 entries of g side by side (soa_store(g + f, ...)), so they go in one store. Such
//     a kernel comes twice, each definition under `#if defined(__AVX__)` and `#if
//     !defined(__AVX__)`: without AVX, g++ passes 4-wide vectors through memory, so there
//     the kernel is planned again with packs of `step_lanes_without_avx` (2: `soa_p2`, two
//     doubles, an SSE2 register; the same operations per lane, so the same bits), or, in
//     a large set, written without packs. The compiler compiles one of the two. Shared
//     programs get packs the same way (and come twice the same way); loops only in a large
//     set. The shared programs' outputs are laid out in `s` for the packs (specialise::
//     reorder_outputs, the AVX form's plans deciding): the entries a pack reads lane by
//     lane side by side where they can be (soa_load(s + e), shuffled within four), the
//     values a pack position writes likewise (one soa_store); a pack's lanes that are
//     consecutive outputs of a kernel go in one store too. `s` is padded so that a load of
//     the last entries stays inside it.
//   Outputs no operation computes are written by the kernel's entry: a run of fewer than
//   256 zeros as soa_zeros<n> calls (inline vector stores, n <= 8), longer runs as loops.
//   Each kernel's names are its own: kernels named detail or soa_v4, or with a port named s,
//   w, in, g or soa_anything (the arrays above and below, and every local of the generated
//   code), or named soa_p4, soa_p2, soa_load, soa_store, soa_shuffle, soa_zeros or soa_z4,
//   are refused.
//   It compiles warning-free with -std=c++17 -Wall -Wextra -O2 (g++ or clang++: the lane
//   groups are their vector extensions) and includes only <cmath> and
//   its header, which includes <Eigen/Core> unless SOA_GEN_NO_EIGEN is defined (the sources
//   define it: they need no Eigen).
// - Sin and Cos: each source holding a function that takes one defines `struct
//   soa_sincos_pair { double s, c; }`, `static inline soa_sincos_pair soa_sincos(double)`
//   and `soa_sincos_n(x, sin_x, cos_x, n)` once -- soa::sincos (support/sincos.hpp)
//   printed, an inline sine-cosine pair instead of two libm calls, [[gnu::always_inline]]
//   (else g++ outlines its fast path from a kernel this long: a call per joint); the same
//   operations for n angles as one branch-free loop, which g++ vectorises (2 to 8 angles
//   per instruction: 3x faster for 32 angles built for an AVX-512 CPU, 1.6x with SSE2);
//   libm's fallback in a cold soa_sincos_libm. The inputs whose sine or cosine is taken
//   (the joint angles) open the function's body (a kernel's, a part's or a shared
//   program's), in input order, under one comment, before any other statement: from 4 of
//   them on, as `const double soa_angle[K] = {...}; double soa_sin[K], soa_cos[K];
//   soa_sincos_n(soa_angle, soa_sin, soa_cos, K);`, the Sin and Cos nodes reading
//   soa_sin[j] and soa_cos[j]; fewer, as one `const soa_sincos_pair scN = soa_sincos(x);`
//   each, read as scN.s and scN.c. A computed value's pair comes at its first Sin or Cos.
//   Only values some Sin or Cos reads get one; kernels without either carry none of it.
// - Values: compiled as documented (-O2, no -march: no FMA contraction), every kernel
//   computes specialise::evaluate's values bit for bit (the LLVM back-end's too), however
//   it is cut: parts, shared programs, dot tables and lane groups perform the same
//   operations in the same order.
// - Emission is deterministic: the same inputs give the same text.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/execute.hpp"
#include "model/robot.hpp"
#include "specialise/kernel.hpp"
#include "specialise/share.hpp"

namespace soa::emit {

// One joint in joint-space order, for the header's conventions block.
struct JointInfo {
  std::string name, link;  // URDF joint and child link
  JointKind kind = JointKind::Revolute;
  int q = 0, v = 0;  // first q and qd index
};

struct Target {
  std::string robot;          // the namespace soa_gen::<robot> and the extern "C" prefix (specialise::check_name)
  std::string robot_name;     // the URDF robot name, as written (banner only)
  std::string robot_source;   // where the model came from (URDF path, or a description)
  std::string robot_hash;     // robot_fingerprint()
  std::string robot_summary;  // "9 bodies, nq 9, N 9, tips: ..." (robot_summary())
  int nq = 0, nv = 0, tips = 0;
  std::string file_stem;                            // header <stem>.hpp, source <stem>.cpp
  std::string kernel_source;                        // the .soa file the kernels come from ("": the standard kernels)
  std::array<double, 3> gravity{0.0, 0.0, -9.81};   // world axes, m/s^2, as specialised
  std::vector<JointInfo> joints;                    // joint-space order
  std::vector<std::string> tip_frames, tip_bodies;  // per tip, in order: its frame and its body
  // Per tip: what holds it ("held by a constraint with the world in x,y,z: ..."), or "".
  std::vector<std::string> tip_notes;
  std::vector<std::string> bodies;  // by body index (the SOA numbering)
};

// The robot part of a Target, from the model and its tip frames. `name` sets the
// namespace, the extern "C" prefix and the file stem (default: specialise::identifier(robot.name)
// and <that>_kernels); it is checked with specialise::check_name().
Target make_target(const Robot& robot, const std::vector<int>& tip_frames, std::string name = {});

struct SourceFile {
  std::string name, text;
};

struct Emitted {
  std::string header_name, header;
  std::vector<SourceFile> sources;  // CppOptions::sources of them
  std::string all_sources() const;  // their texts one after the other (for searching)
};

inline constexpr int kMaxSources = 64;

struct CppOptions {
  // The sources to write: `sources` files that compile in parallel (see Contract).
  int sources = 1;
  // Functions of at most about this many operations: g++'s cost grows faster than the
  // length of a function, linearly in their number (docs/performance.md).
  int part_ops = 500;
  // A kernel or shared program of at most this many operations stays one function: cut,
  // the Panda's 1000-operation inverse dynamics ran 10% slower (values passed through
  // memory between parts), and short functions cost g++ little.
  int whole_ops = 3000;
  // What several kernels compute alike, when at least this many operations, once per source
  // set (specialise::share); <= 0: nothing shared. (At 1000, the velocities inverse and
  // forward dynamics both compute are shared too: 10,000 operations fewer for a 100-body
  // tree, but talos_reduced's inverse dynamics ran 20% slower reading them back:
  // docs/performance.md.)
  int share_min_ops = specialise::kDefaultShareMinOps;
  // A kernel whose sums of products (Gram entries) have at least this many products gets
  // them computed by a loop over a table (specialise/dot_table.hpp); <= 0: never. Below,
  // straight-line chains cost g++ little (5000 products: about a second) and run faster:
  // the CPU overlaps independent chains, which the loop's exits, mispredicted, cut apart
  // (talos_reduced's calM^-1, 3768 products: 11% slower by table; docs/performance.md).
  int dot_min_terms = 5000;
  // A kernel of at least this many operations (all of them, shared ones too, as for lane
  // groups) runs the steps it repeats column after column (alike operations at one body,
  // specialise/step_loops.hpp) as loops over tables; <= 0: never. Those steps are most of a
  // tree's O(N^2) kernels (calM, calM^-1, Lambda, J); as loops they take half the source,
  // which is what they are for (g++'s time), and run within about 10% of the code written
  // out on a 100-body tree. Below, a talos-sized kernel's loops run two to five columns each
  // and its written-out code fits the caches: written out, its calM^-1 ran up to 15%
  // faster, and its whole standard set compiles in seconds (docs/performance.md).
  int loop_min_ops = 25000;
  // ...when its loops run at least this many instances on average (weighted by their
  // steps' sizes); else it is written out, with packs (below). A big tree's calM, calM^-1,
  // Lambda and J run 9 to 26 columns a loop; a talos-sized kernel big for another reason
  // (derivatives: O(N depth) pairs of joints) two or three, too few to repay the tables:
  // written out with packs of bodies, talos_reduced's derivatives of inverse and forward
  // dynamics ran 1.2x faster (docs/performance.md). At 3, a 400-body tree's inverse
  // dynamics is written out too, its other loops kept: its source grew 3%.
  int loop_min_instances = 3;
  // A kernel set of at least `large_set_ops` operations (a 100-body tree's standard set:
  // 1.1 million) shares from `large_share_min_ops` instead, and runs per-body loops (see
  // Step loops): there g++'s time is the limit, and the velocities inverse and forward
  // dynamics both compute are 10,000 operations compiled once. Not below: talos_reduced's
  // derivative set (490,000) ran its mass matrix 1.65x, calM^-1 1.3x and inverse dynamics'
  // derivatives 1.2x faster as a set of that size, for 3% more of g++'s time
  // (docs/performance.md).
  long large_set_ops = 600000;
  int large_share_min_ops = 1000;
  // A kernel of at least `lane_min_ops` operations (all of them, shared ones too: the same
  // whichever set it is in) gets its sums of products that share a factor term by term
  // (Gram entries: rows of one column; -calM^-1 d tau) computed
  // `lanes` at a time (2..4; specialise/lanes.hpp), as vector code, instead of by a dot
  // table or straight-line; < 2: never. Why: straight-line, each product is two loads, a
  // multiply and an add; four at a time, a quarter of that (talos_reduced's calM^-1 and
  // forward dynamics' derivatives built for its CPU: docs/performance.md). Below
  // `lane_min_ops`, short chains do not repay packing their factors (as in the JIT,
  // jit.hpp); above `lane_max_steps` vector steps (a 100-body tree's calM^-1 and Lambda),
  // a dot table's O(N^2) rows compile in a fraction of the time of O(N^2 depth / 4) lines.
  int lanes = 4;
  int lane_min_ops = 10000;
  // A kernel of at least `step_lane_min_ops` operations (all of them, as above) and below
  // `loop_min_ops` computes the steps it repeats column after column (step_loops.hpp: the
  // same operations at one body) `step_lanes` at a time (2..4), as vector code where the
  // compiler targets AVX (see Packs); < 2: never. Why: the columns' steps are most of calM,
  // calM^-1 and Lambda besides their Gram entries, and four at a time they take a fraction
  // of the instructions (talos_reduced's calM^-1 built for its CPU: 14% faster, its mass
  // matrix 7%; docs/performance.md).
  int step_lanes = 4;
  // Where the compiler targets no AVX, the kernels with packs come in a second form with
  // packs of this many lanes (2: SSE2's two doubles; < 2: that form without packs; never
  // more than step_lanes), except in a large set (`large_set_ops`), where g++'s time is the
  // limit. Why: at the default
  // flags Baxter's loop ran its forward dynamics in 0.66 of the time and its inverse
  // dynamics in 0.40 with them (docs/performance.md, "Packs of two").
  int step_lanes_without_avx = 2;
  int step_lane_min_ops = 0;
  int lane_max_steps = 20000;
  // Lane groups that are a dense product column by column (specialise::lane_columns:
  // -calM^-1 d tau, a column's rows sharing every term's factor) with at least this many
  // rows are one loop over each column's terms instead of written out; <= 0: never. Why:
  // written out, talos_reduced's -calM^-1 d tau is 13,000 vector steps, most of forward
  // dynamics' derivatives' code; as loops (its columns have 36 rows), the kernel ran 7%
  // faster. The Panda's 8 rows ran 7% slower so: the loop's own work, gathering the vectors
  // and running their tables, is paid per row (docs/performance.md).
  int column_min_rows = 16;
};

Emitted emit_cpp(const std::vector<specialise::Kernel>& kernels, const Target& target, const CppOptions& options = {});

// Sources per kernel set by default (soac emit --sources, soac.emit): enough for the cores
// of a typical build machine.
inline constexpr int kDefaultSources = 4;
// Above this many lines compiled (all sources together, one form of each kernel with
// packs: compiled_lines) g++ -O2 needs more than about 30 s of CPU for the generated code
// (it compiles about 9,000 such lines a second: a 100-body tree's 208,000 in 22.5 s,
// docs/performance.md, "Building the generated code"): a robot's dynamics should not cost
// its build more.
inline constexpr long kDefaultWarnLines = 250000;

// Writes the header and the sources into directory `out` (made when missing), each beside
// its target and then renamed over it: either all of them appear complete, or none changes.
// Returns their paths (`out`/name), the header first. A UserError names the directory or
// the file that cannot be written.
std::vector<std::string> write_files(const Emitted& files, const std::string& out);
// The lines of all the sources together.
long source_lines(const Emitted& files);
// The lines a build compiles: those of a build without AVX, the `#if defined(__AVX__)`
// forms left out (a kernel with packs is written twice and the preprocessor keeps one).
long compiled_lines(const Emitted& files);
// The warning, without "soac: warning: ", when the sources compile more than `limit` lines.
std::string size_warning(long lines, long limit);

// FNV-1a 64 of the robot's URDF file when it can be read ("file fnv1a64:..."), else of the
// model's numbers and structure ("model fnv1a64:...").
std::string robot_fingerprint(const Robot& robot);

// The version string the banner carries.
const char* soac_version();

// The toolchain soac was built with, for compiling generated code on this machine: the C++
// compiler and Eigen's include directory (the header's Eigen overloads need it).
struct Toolchain {
  std::string cxx;
  std::string eigen_include;
};
Toolchain build_toolchain();

}  // namespace soa::emit
