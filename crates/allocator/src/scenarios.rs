//! Teaching scenarios (placeholder while tuning).
