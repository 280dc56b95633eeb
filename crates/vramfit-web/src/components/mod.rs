//! The page's components, one per file. They render props and emit
//! callbacks; validation, estimation and formatting live in
//! [`crate::state`], [`crate::present`], [`crate::chart`] and [`crate::i18n`].

mod app;
mod batch_chart;
mod bench_frame;
mod bench_page;
mod bench_results;
mod bench_tab;
mod breakdown_bar;
mod config_form;
mod custom_model;
mod header;
mod import_box;
mod layer_table;
mod link_extras;
mod link_warnings;
mod notice;
mod number_field;
mod peak_breakdown;
mod peak_numbers;
mod planner_panel;
mod results;
mod select_field;
mod share_box;
mod techniques;
mod timeline_chart;
mod verdict;
mod widget;
mod widget_form;

pub use app::App;
pub use batch_chart::BatchChart;
pub use bench_frame::BenchFrame;
pub use bench_page::BenchPage;
pub use bench_results::BenchResults;
pub use bench_tab::BenchTab;
pub use breakdown_bar::BreakdownBar;
pub use config_form::ConfigForm;
pub use custom_model::CustomModel;
pub use header::Header;
pub use import_box::ImportBox;
pub use layer_table::LayerTable;
pub use link_extras::LinkExtras;
pub use link_warnings::LinkWarnings;
pub use notice::Notice;
pub use number_field::NumberField;
pub use peak_breakdown::PeakBreakdown;
pub use peak_numbers::PeakNumbers;
pub use planner_panel::PlannerPanel;
pub use results::Results;
pub use select_field::SelectField;
pub use share_box::ShareBox;
pub use techniques::Techniques;
pub use timeline_chart::TimelineChart;
pub use verdict::Verdict;
pub use widget::Widget;
pub use widget_form::WidgetForm;
