/**
 * A self-signed certificate for 127.0.0.1 (P-256, valid until 2126) and its key, for TLS servers on
 * loopback in tests only: a process trusts it through NODE_EXTRA_CA_CERTS. Made with
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1`.
 */
export const LOOPBACK_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgipNTHhroW1NTem7+
p6eojN4hXPgdSM2QbSW1JpSHHW2hRANCAARmDfEcFKdBiwYPrXL2/56vH669zjDd
MViVk+j6OSv4rZnQgQ+/iYVgpJzjRUhUxkK/5QWNr//BQKbqOp9U8Vfj
-----END PRIVATE KEY-----
`

export const LOOPBACK_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUIRxVqRR1DMsuEt0ORuKKgYkgtBkwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwNTA5NTEwNFoYDzIxMjYxMTEx
MDk1MTA0WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARmDfEcFKdBiwYPrXL2/56vH669zjDdMViVk+j6OSv4rZnQgQ+/iYVg
pJzjRUhUxkK/5QWNr//BQKbqOp9U8Vfjo2QwYjAdBgNVHQ4EFgQUsqIrVDFICBfz
GQ/rX9tNR064k+0wHwYDVR0jBBgwFoAUsqIrVDFICBfzGQ/rX9tNR064k+0wDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IG4Uij/pBDT9RHQswhea199FHJysFpM0gWFjjQwnJd/PAiEA4Sd+BO4zCElf/YY4
zhpVLoZu+Rc8aopM7EANHVpuRrA=
-----END CERTIFICATE-----
`
