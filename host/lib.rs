//! aceapex: absolute-offset LZ77 with interleaved rANS, CPU encoder/decoder and GPU decoders.

pub use aceapex_device as device;

pub mod lz;
