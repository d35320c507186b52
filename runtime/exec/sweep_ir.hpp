// Sweep IR: the loop-level program an operator expression becomes (reference section 5).
//
// The compiler's lower/ stage produces it from the operator IR; this runtime executes it
// (execute.hpp) for any robot loaded at run time, with any scalar type. It sits in the
// runtime so that the dependency runs compiler -> runtime only.
//
// Contract
// - A SweepProgram is robot independent. It reads its inputs (q, qd, qdd, T, f0, ... in the
//   declared order), runs its loops in order and writes one output (a stacked vector, or an
//   operator-valued result built column by column, see Columns).
// - Loops visit every body once: Inward = tip to base (k = 0..n-1 in the SOA numbering:
//   children before parents), Outward = base to tip. A loop's body is an ordered list of
//   statements executed at body k.
// - Per-body values: Joint vars hold nv(k) numbers at body k, Spatial vars 6 (angular
//   first), Tip vars 6 per tip frame (written at the tip's body), the Config var q holds
//   nq(k). The model quantities (phi(q), V, a, b; P, D, G; R; Upsilon) are computed by
//   Compute statements into fixed per-body slots (enum Quantity).
// - A statement reads values at k (Self), at k's children (inside an EdgeIn, inward loops)
//   or at k's parent (inside an EdgeOut, outward loops); the program is valid when every
//   value is computed before it is read. lower/schedule checks this when it builds loops.
// - Nodes are small immutable values built through the make functions below, which check
//   spaces (an Apply's operand has the block's input space, sums agree, ...).
// - print() is deterministic and uses the papers' loop notation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace soa::exec {

// The stacked spaces a per-body value lives in.
enum class Space : std::uint8_t {
  Config,   // q: nq(k) per body
  Joint,    // N: nv(k) per body
  Spatial,  // 6n: 6 per body
  Tip,      // 6m: 6 per tip frame
};
std::string_view to_string(Space s);  // "nq", "N", "6n", "6m"

enum class Direction : std::uint8_t {
  Inward,   // tip to base: children before parents (causal operators: phi, psi, K, ...)
  Outward,  // base to tip: parents before children (their adjoints)
};
std::string_view to_string(Direction d);

// Model quantities, each computed by one Compute statement into a per-body slot.
enum class Quantity : std::uint8_t {
  Transform,    // phi(p(k),k) from q(k): rotation R and offset l (kinematics.cpp)
  Velocity,     // V(k) = phi*(p(k),k) V(p(k)) + H*(k) qd(k)
  BiasA,        // a(k): velocity-dependent acceleration bias, gravity at the roots
  BiasAbar,     // abar(k) = V(k) x H*(k) qd(k): phi* abar = dV/dt at qdd = 0 without gravity
  BiasB,        // b(k): gyroscopic force bias
  Articulated,  // Riccati: P(k), D(k), D^-1(k), G(k) (001 eqs. 40-44)
  Composite,    // composite-body inertia R(k) (001 Identity 1)
  Upsilon,      // Upsilon(k) (002 eq. 3.11)
};
inline constexpr int kQuantityCount = 8;
std::string_view to_string(Quantity q);

// Per-body (memoryless) maps a vector expression can apply.
enum class Block : std::uint8_t {
  H,
  Hstar,
  M,
  Minv,
  P,
  R,
  Upsilon,
  D,
  Dinv,
  // D's factors, D = L_D Delta_D L_D* (L_D unit lower triangular, per body): D^-1 =
  // L_D^-* Delta_D^-1 L_D^-1, so the Gram way splits a weight D^-1 between a column and its
  // partner (lower.cpp) and pays L_D^-1 once per column, not D^-1's full block.
  LDinv,
  DeltaInv,
  G,
  Gstar,
  Taubar,
  TaubarStar,
  Tau,
  TauStar,
};
std::string_view to_string(Block b);            // "H", "H*", "D^-1", ...
Space block_input(Block b);                     // the space of the operand
Space block_output(Block b);                    // the space of the result
std::optional<Quantity> block_source(Block b);  // the quantity the block is made of, if any

// ---- per-body vector expressions --------------------------------------------------------

enum class VKind : std::uint8_t {
  Var,      // a var at the current body
  Read,     // a spatial model quantity at the current body: V, a or b
  Zero,     // zero of a space
  Sum,      // sum_i coef_i term_i
  Apply,    // Block(k) operand(k)
  EdgeIn,   // sum over children c of phi(k,c) operand(c)   (E_phi, inward)
  EdgeOut,  // phi*(p(k),k) operand(p(k)), zero at a root  (E_phi*, outward)
  TipIn,    // sum over the tips t at body k of B(k,t) var(t)   (pick-off B)
};

struct VNode;

class VExpr {
public:
  VExpr() = default;
  explicit VExpr(std::shared_ptr<const VNode> n) : node_(std::move(n)) {}
  VKind kind() const;
  Space space() const;
  int var() const;                                             // Var, TipIn
  Quantity quantity() const;                                   // Read
  Block block() const;                                         // Apply
  const VExpr& operand() const;                                // Apply, EdgeIn, EdgeOut
  const std::vector<std::pair<double, VExpr>>& terms() const;  // Sum
  const VNode* get() const { return node_.get(); }
  explicit operator bool() const { return static_cast<bool>(node_); }
  friend bool operator==(const VExpr& a, const VExpr& b);  // structural

private:
  std::shared_ptr<const VNode> node_;
};

struct VNode {
  VKind kind;
  Space space;
  int var = -1;
  Quantity quantity = Quantity::Velocity;
  Block block = Block::H;
  VExpr operand;
  std::vector<std::pair<double, VExpr>> terms;
};

// Checked constructors.
VExpr var(int id, Space space);  // Joint, Spatial or Tip... read at k
VExpr read(Quantity q);          // Velocity, BiasA, BiasAbar or BiasB
VExpr zero(Space space);
// Sum of terms of one space; nested sums are flattened, zero terms and zero coefficients
// dropped; an empty sum is zero(space); a single term with coefficient 1 is that term.
VExpr sum(std::vector<std::pair<double, VExpr>> terms, Space space);
VExpr apply(Block b, VExpr operand);
VExpr edge_in(VExpr operand);   // operand Spatial
VExpr edge_out(VExpr operand);  // operand Spatial
VExpr tip_in(int tip_var);

// ---- statements, loops, programs ----------------------------------------------------------

struct Stmt {
  enum class Kind : std::uint8_t {
    Assign,     // dst(k) = rhs(k)
    TipAssign,  // for every tip t at body k: dst(t) = B*(t,k) rhs(k) (rhs Spatial), or
                // dst(t) = rhs(t) (rhs a sum of Tip vars: a tip-space combination)
    Compute,    // the model quantity `quantity` at k
  };
  Kind kind = Kind::Assign;
  int dst = -1;
  VExpr rhs;
  Quantity quantity = Quantity::Transform;
  int arg = -1;       // Compute: the input var read (q for Transform, qd for V and a)
  std::string label;  // the operator factor the statement comes from ("psi", "K", ...)
};

Stmt assign(int dst, VExpr rhs, std::string label);
Stmt tip_assign(int dst, VExpr rhs, std::string label);
Stmt compute(Quantity q, int arg = -1);

struct Solve;
struct SweepProgram;

// A sweep over the bodies, or (when `solve` is set, `body` empty) one tip-space solve, or
// (when `springs` is a var, `body` empty) the compliant grasps' forces: the Tip var `springs`
// receives fg, for each tip t grasping u (TipConstants::spring_to) the force law of
// model/robot.hpp Spring -- what t exerts on its spring, f0's convention, and the opposite
// carried to u -- from the tips' relative pose and twist; the loops before it have computed
// every body's Transform and Velocity. Likewise (when `errors` is a var) the welds' pose
// errors ex: for each tip t welded to u (TipConstants::partner), [vee(R - R*) / 2; R* l] of
// t's pose (R, l) relative to u's, 0 at the other tips.
struct Loop {
  Direction direction = Direction::Inward;
  std::vector<Stmt> body;
  std::shared_ptr<const Solve> solve;
  int springs = -1;
  int errors = -1;
};

struct Var {
  std::string name;
  Space space;
};

// An operator-valued result, one column at a time: the unit vector e_j is written into
// `unit` (all bodies / tips), `loops` run, and `result` becomes column j.
enum class Fill : std::uint8_t {
  Full,  // every column computed entirely
  // calM by CRB-H (004 eq. 5.45): `result` is column j of the causal part H phi R H*, exact
  // in the rows of body(j) and its ancestors; the other rows come from symmetry (calM(i,j)
  // = calM(j,i) for i below body(j)) or are zero (unrelated bodies).
  SymmetricFromAncestors,
  // A* W A (W a symmetric per-body block, e.g. calM^-1 = (I - H psi K)* D^-1 (I - H psi K),
  // 001 Identity 6): `result` is column j of A, `weighted` is W times it, and the output is
  // their Gram matrix, out(i,j) = result_i . weighted_j, computed for i <= j and mirrored.
  // When A is causal (an inward sweep: I - H psi K, H psi B), column j is zero outside
  // body(j) and its ancestors, so specialised code sums over common ancestors only.
  Gram,
};

struct Columns {
  Space space = Space::Joint;  // the column space
  int unit = -1;               // var receiving e_j
  std::vector<Loop> loops;
  int result = -1;  // var holding column j afterwards
  Fill fill = Fill::Full;
  int weighted = -1;  // Gram: var holding W times column j
};

// A tip-space system X z = y solved once, between the loops before it (which computed y
// and what X is made of) and the loops after it (which read z): 000 eq. 5.11's small solve
// of closed chains, Lambda_c^-1 f = ... . X (6m x 6m) is the Gram matrix of `matrix`
// (Fill::Gram: X(i,j) = result_i . weighted_j), its columns formed after the loops before;
// y and z are Tip vars. Only the rows each tip holds (TipConstants::held: a point
// contact's three translations, all six for a weld) take part: with S selecting them,
// z = S* (S X S*)^-1 S y, the other rows of z are 0 and the columns of X they would need
// are never formed. S X S* is factored as L D L* without pivoting (the executor does not
// branch on values); run with S = double, a pivot at or below 1e-12 of its largest
// diagonal entry is a UserError naming the tip frame and direction (dependent constraint
// directions). A Solve may also be a loop of an operator-valued result's Columns ((J calM^-1
// J*)^-1 itself: column j is X^-1 e_j), which then runs it once per column.
struct Solve {
  Columns matrix;
  int rhs = -1;  // Tip var y
  int dst = -1;  // Tip var z = X^-1 y
};

// Every Solve of a program: its run-once loops', then its columns', in order.
std::vector<const Solve*> solves(const SweepProgram& p);

struct Output {
  std::string name;
  Space rows = Space::Joint;
  std::optional<Space> cols;  // nullopt: a vector
  int var = -1;               // vector: the var gathered after the loops
};

// A way the lowering took (compiler/lower), and the identity of the library behind it.
struct LoweringStep {
  std::string way;       // "composite-body", "gram", "newton-euler", "sweeps", "columns"
  std::string identity;  // the library identity that allows it ("CRB-H"; empty: none needed)
  std::string citation;
  std::string what;  // one line: what the code does
};

struct SweepProgram {
  std::string name;                    // kernel name, for printing
  std::string source;                  // the operator expression it was lowered from
  std::vector<LoweringStep> lowering;  // how, in order (at least one)
  std::vector<Var> vars;
  std::vector<int> inputs;  // var ids, in the declared order (input layout)
  Output output;
  std::vector<Loop> loops;         // run once, in order
  std::optional<Columns> columns;  // operator-valued output: run per column after `loops`

  // Number of loops: `loops` plus the loops of one column.
  int loop_count() const;
};

// The papers' loop notation, e.g.
//   for k = 1..n (inward, tip to base):
//     z1(k) = sum_c phi(k,c) [G(c) y1(c) + taubar(c) z1(c)]   [K, psi]
std::string print(const SweepProgram& p);
std::string print(const VExpr& e, const std::vector<Var>& vars, std::string_view at = "k");

}  // namespace soa::exec
