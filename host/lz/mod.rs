//! Encoder match layer: match finding and parsing into the four streams (FORMAT.md §4).
