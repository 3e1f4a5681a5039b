package model

// SHIM until branch mirrortopic lands. DELETE ON MERGE.
const MirrorAppendTag = 0x5341
