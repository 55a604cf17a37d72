#!/usr/bin/env bash
# Regenerates the test PKI (committed, valid 100 years; test use only: the keys are public).
# ca: the clients' test CA (server, server2 for rotation, client for mTLS);
# cluster-ca: the cluster's CA (node = a cluster member);
# rogue-ca: another CA (rogue-node has a certificate, but not one the cluster trusts).
set -euo pipefail
cd "$(dirname "$0")"
days=36500
ca() { # name subject
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1-key.pem" -out "$1.pem" \
    -days $days -subj "/CN=$2" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() { # name subject ca keyalg ext
  openssl req -newkey "$4" -nodes -keyout "$1-key.pem" -out "$1.csr" -subj "/CN=$2"
  openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3-key.pem" -CAcreateserial -out "$1.pem" -days $days \
    -extfile <(printf '%s\n' "$5")
  rm -f "$1.csr"
}
ca ca "Tandem test CA"
ca cluster-ca "Tandem test cluster CA"
ca rogue-ca "Someone else's CA"
san="subjectAltName=DNS:localhost,IP:127.0.0.1"
leaf server "localhost" ca rsa:2048 "$san
extendedKeyUsage=serverAuth"
leaf server2 "localhost (rotated)" ca rsa:2048 "$san
extendedKeyUsage=serverAuth"
leaf client "test client" ca ec:<(openssl ecparam -name prime256v1) "extendedKeyUsage=clientAuth"
node_ext="$san
extendedKeyUsage=serverAuth,clientAuth"
leaf node "tandem node" cluster-ca ec:<(openssl ecparam -name prime256v1) "$node_ext"
leaf rogue-node "tandem node" rogue-ca ec:<(openssl ecparam -name prime256v1) "$node_ext"
rm -f ./*.srl
