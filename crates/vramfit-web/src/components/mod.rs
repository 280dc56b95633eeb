//! The page's components, one per file. They render props and emit
//! callbacks; validation, estimation and formatting live in
//! [`crate::state`], [`crate::present`] and [`crate::labels`].

mod app;
mod config_form;
mod notice;
mod number_field;
mod peak_breakdown;
mod peak_numbers;
mod results;
mod select_field;
mod verdict;

pub use app::App;
pub use config_form::ConfigForm;
pub use notice::Notice;
pub use number_field::NumberField;
pub use peak_breakdown::PeakBreakdown;
pub use peak_numbers::PeakNumbers;
pub use results::Results;
pub use select_field::SelectField;
pub use verdict::Verdict;
