//! lkpbot: follows the Linux kernel test robot's reports on a mailing list
//! and tracks each one as a regression case.
//!
//! The pipeline and the rules every module keeps are in ARCHITECTURE.md.
//! In short: `source` reads raw messages, `mail` normalises them,
//! `classify` and `commands` say what they are, and `cli` wires it up.
//! Everything but `source` and `cli` is pure.
#![deny(clippy::unwrap_used)]

pub mod act;
pub mod auth;
pub mod case;
pub mod classify;
pub mod cli;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod deliver;
pub mod digest;
pub mod engine;
pub mod mail;
pub mod model;
pub mod render;
pub mod source;
pub mod store;
pub mod text;
pub mod thread;
pub mod view;
pub mod web;
