#include "lower/kernels.hpp"

namespace soa::lower {

const std::vector<KernelDecl>& standard_kernels() {
  static const std::vector<KernelDecl> kernels = {
      {"inverse_dynamics",
       {"q", "qd", "qdd"},
       "calM qdd + C",
       "tau",
       "joint forces for accelerations qdd (recursive Newton-Euler, 001 eq. 23 without tip forces)"},
      {"mass_matrix", {"q"}, "calM", "calM", "the N x N mass matrix (composite rigid body, 004 eq. 5.45)"},
      {"forward_dynamics",
       {"q", "qd", "T"},
       "calM^-1 (T - C)",
       "qdd",
       "joint accelerations for joint forces T (articulated body, 001 Identity 6)"},
      {"mass_matrix_inverse",
       {"q"},
       "calM^-1",
       "calMinv",
       "the inverse mass matrix (001 Identity 6, column by column)"},
      {"jacobian", {"q"}, "J", "J", "the tip frames' Jacobian B* phi* H* (6 rows per tip)"},
      {"lambda",
       {"q"},
       "J calM^-1 J*",
       "Lambda",
       "the tips' inverse operational-space inertia J calM^-1 J* (000 eq. 5.5, 002 eq. 3.10)"},
      {"tip_force_correction",
       {"q", "f0"},
       "calM^-1 J* f0",
       "dqdd",
       "joint accelerations caused by tip forces f0 (000 eq. 5.3, 002 eq. 3.12)"},
  };
  return kernels;
}

const std::vector<KernelDecl>& welded_kernels() {
  static const std::vector<KernelDecl> kernels = {
      {"constrained_forward_dynamics",
       {"q", "qd", "T"},
       "calM^-1 (T - C - J* (J calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar))",
       "qdd",
       "joint accelerations with every tip held by its weld or contact: free dynamics, one tip-space "
       "solve, one correction (000 eqs. 5.6-5.11)"},
      {"constraint_forces",
       {"q", "qd", "T"},
       "(J calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar)",
       "f",
       "the forces f the held tips exert ([torque; force] per tip, in its frame, 0 in rows no constraint "
       "holds; T = calM qdd + C + J* f)"},
      {"operational_space_inertia",
       {"q"},
       "(J calM^-1 J*)^-1",
       "Lambda_c",
       "the held tips' operational-space inertia, the inverse of J calM^-1 J* on the rows the constraints "
       "hold (Q* (Q X Q*)^-1 Q for a weld between frames; 0 in the rows none holds), one tip-space LDL* and "
       "6m substitutions (000 eq. 5.5, 003 Part II)"},
  };
  return kernels;
}

std::vector<KernelDecl> grasped_kernels(bool welded) {
  std::vector<KernelDecl> kernels = {
      {"grasp_forces",
       {"q", "qd"},
       "fg",
       "fg",
       "what each tip exerts on its compliant grasps' springs and dampers ([torque; force] per tip, in its "
       "frame; f0's convention)"},
  };
  if (!welded) {
    kernels.push_back({"compliant_forward_dynamics",
                       {"q", "qd", "T"},
                       "calM^-1 (T - C - J* fg)",
                       "qdd",
                       "joint accelerations under the compliant grasps' forces (003 Part II, non-rigid grasps "
                       "as a force law)"});
    return kernels;
  }
  // The applied forces T - C of the welded kernels become T - C - J* fg.
  const std::string applied = "T - C", with_springs = "T - C - J* fg";
  for (KernelDecl k : welded_kernels()) {
    bool replaced = false;
    for (std::size_t at = 0; (at = k.expression.find(applied, at)) != std::string::npos; at += with_springs.size()) {
      k.expression.replace(at, applied.size(), with_springs);
      replaced = true;
    }
    if (replaced) k.meaning += ", with the compliant grasps' forces applied";
    kernels.push_back(std::move(k));
  }
  return kernels;
}

const std::vector<KernelDecl>& derivative_kernels() {
  static const std::vector<KernelDecl> kernels = {
      {"inverse_dynamics_derivatives",
       {"q", "qd", "qdd"},
       "calM qdd + C",
       "dtau",
       "[d tau / dq, d tau / dqd] (N x 2N; q in its tangent space; d tau / dqdd = calM)",
       {"q", "qd"}},
      {"forward_dynamics_derivatives",
       {"q", "qd", "T"},
       "calM^-1 (T - C)",
       "dqdd",
       "[d qdd / dq, d qdd / dqd] (N x 2N; q in its tangent space; d qdd / dT = calM^-1)",
       {"q", "qd"}},
      {"mass_matrix_derivative",
       {"q"},
       "calM",
       "dcalM",
       "d calM / dq_i for i = 1..N, one N x N matrix after another (N x N^2; q in its tangent space)",
       {"q"}},
      {"coriolis_matrix",
       {"q", "qd", "qdd"},
       "calM qdd + C",
       "Cor",
       "the Coriolis matrix Cor(q, qd) = (d tau / dqd + calM Z) / 2 (N x N): calM_dot - 2 Cor skew, "
       "Cor qd = C without gravity",
       {"qd"},
       exec::DerivativeForm::Coriolis},
      {"christoffel",
       {"q", "qd", "qdd"},
       "calM qdd + C",
       "Gamma",
       "the Christoffel symbols of the first kind (004 section 5): block k (N x N) = d Cor / dqd_k, "
       "entry (i, j) = Gamma_ijk (N x N^2)",
       {"qd"},
       exec::DerivativeForm::Christoffel},
  };
  return kernels;
}

}  // namespace soa::lower
