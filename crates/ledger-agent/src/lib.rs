//! Client library for reporting agents: sign events, stream them over gRPC, resend from the last receipt.
