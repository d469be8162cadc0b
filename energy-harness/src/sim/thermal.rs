//! The simulated GPU's die temperature and its leakage: the die heats toward a level set
//! by the board's power (first order: `T → T_idle + r · (P − P_idle)` with time constant
//! `τ`), and a kernel draws `leak · (T − T_idle)` watts more than its nominal power when it
//! starts on a warm die. That is what makes one kernel read 0.3-0.55 % more per °C on the
//! H100s measured, and what temperature normalization ([`crate::engine::thermal`]) and
//! paired runs must see through. The truth stays exact: each kernel's extra power is fixed
//! when it is scheduled, so the timeline's integral still holds every joule drawn.

/// The thermal parameters of a simulated board.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimThermal {
    /// Die temperature at idle, °C (where a kernel draws its nominal power).
    pub idle_c: f64,
    /// Steady-state rise per watt above idle, °C/W.
    pub c_per_w: f64,
    /// Time constant of the die's approach to its steady level, s.
    pub tau_s: f64,
    /// Extra load power per °C above `idle_c`, W/°C (the truth dP/dT).
    pub leak_w_per_c: f64,
}

impl SimThermal {
    /// An H100 SXM as it behaved in the measurements: 35 °C idle, about 55 °C under an FMA
    /// loop (0.09 °C/W), warming with a 30 s time constant, 1.4 W/°C of leakage (0.4 % per
    /// °C of a 336 W kernel, inside the 0.3-0.55 % measured).
    pub fn h100() -> SimThermal {
        SimThermal { idle_c: 35.0, c_per_w: 0.09, tau_s: 30.0, leak_w_per_c: 1.4 }
    }
}

/// The die's temperature as the simulation advances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThermalState {
    /// Clock time of the last update, s.
    pub time_s: f64,
    /// Temperature then, °C.
    pub temperature_c: f64,
}

impl ThermalState {
    /// A die at idle at `time_s`.
    pub fn idle(params: &SimThermal, time_s: f64) -> ThermalState {
        ThermalState { time_s, temperature_c: params.idle_c }
    }

    /// Advances to `time_s` given the mean board power since the last update
    /// (`mean_power_w`); never moves backwards in time.
    pub fn advance(&mut self, params: &SimThermal, idle_w: f64, time_s: f64, mean_power_w: f64) {
        let dt = time_s - self.time_s;
        if !(dt > 0.0 && mean_power_w.is_finite()) {
            return;
        }
        let target = params.idle_c + params.c_per_w * (mean_power_w - idle_w);
        self.temperature_c = target + (self.temperature_c - target) * (-dt / params.tau_s).exp();
        self.time_s = time_s;
    }

    /// The extra power a kernel starting now draws, W.
    pub fn leakage_w(&self, params: &SimThermal) -> f64 {
        params.leak_w_per_c * (self.temperature_c - params.idle_c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_die_warms_under_load_and_cools_at_idle() {
        let p = SimThermal::h100();
        let mut s = ThermalState::idle(&p, 0.0);
        s.advance(&p, 120.0, 30.0, 336.0);
        let steady = 35.0 + 0.09 * 216.0;
        assert!((s.temperature_c - (steady - (steady - 35.0) * (-1.0f64).exp())).abs() < 1e-9);
        assert!(s.leakage_w(&p) > 10.0);
        s.advance(&p, 120.0, 20.0, 500.0); // the past: ignored
        assert_eq!(s.time_s, 30.0);
        s.advance(&p, 120.0, 330.0, 120.0);
        assert!((s.temperature_c - 35.0).abs() < 0.01);
    }
}
