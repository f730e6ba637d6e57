"""Turbo Hearts hands re-played from the reference engine's recorded games (data only)."""

# Three games the reference Turbo Hearts engine played from the same shuffle under the classic,
# bridge and chain charging orders: hands as dealt (N, E, S, W), passes, charges in the order
# they were made, every card with its seat, and the hand scores the reference computed.
# Re-typed here as test data; the engine must accept every action and reach the same scores.
from gamekit import RecordedDeal

RECORDED_TURBO = {
    "classic": (
        RecordedDeal(
            hands=(
                "TS 4S 9H 6H 5H 4H 3H AD KD 5D 4D 9C 7C",
                "KS QS 9S 6S 2S TH 7H 2H JD 8D JC TC 4C",
                "AS 5S 3S TD 7D 6D 3D AC KC 8C 6C 3C 2C",
                "JS 8S 7S AH KH QH JH 8H QD 9D 2D QC 5C",
            ),
            passes=("5H 4H 7C", "TH 8D TC", "AS 3S 7D", "7S QD QC"),
            charges="N- EQS N- S- W-",
            plays=(
                "S2C W5C NQC E7C NAD EJD S6D W7D NQD E6S S3D W9D N4D E2S STD W2D "
                "NTS E9S S5S WJS N4S EKS SAC WAS W8S N7S EQS S6C EJC SKC WQH N9C "
                "E4C S3C W8H N6H STC WKH N9H E5H STH WJH N3H E4H W3S NKD E7H S8D "
                "WAH N5D E2H S8C "
            ),
            scores=(-10, 26, 12, 7),
        ),
        RecordedDeal(
            hands=(
                "TS 9S 8S 6H 5H 2H AD KD 8D 7D 4D 8C 5C",
                "QS 7S 5S AH JH 7H 3H JD 5D 3D QC 4C 2C",
                "KS JS 6S KH QH TH 4H QD 9D 2D KC 7C 6C",
                "AS 4S 3S 2S 9H 8H TD 6D AC JC TC 9C 3C",
            ),
            passes=("9S 8D 7D", "5S 3H 2C", "JS KH KC", "3S 8H TD"),
            charges="N- E- S- W-",
            plays=(
                "N2C EQC S7C WJC EQS SKS W9S N5S E7S S6S W4S N8S S6C WTC N5C EKC "
                "EJD S2D W6D NAD N4D E3D STD W7D S3S W2S NTS EJS E5D S9D W8D NKD "
                "EAH SQD WAC N2H N5H EKH S4H W9H N3H E7H S8H W3C EJH STH W9C N6H "
                "E4C SQH WAS N8C "
            ),
            scores=(-7, 20, 13, 0),
        ),
        RecordedDeal(
            hands=(
                "5S 3S AH 3H JD TD 9D 7D 2D QC JC TC 5C",
                "4S QH 9H 8D 6D 4D 3D KC 9C 8C 7C 3C 2C",
                "AS KS TS 8S 7S 6S JH 8H 7H 5H 4H KD 6C",
                "QS JS 9S 2S KH TH 6H 2H AD QD 5D AC 4C",
            ),
            passes=("JD 7D TC", "QH 3D KC", "AS 8H 7H", "2H AD 4C"),
            charges="N- E- STC N- E- W-",
            plays=(
                "E2C S6C WKC NJC W2S N3S E4S SKS S8S W9S N5S E2H STS WJS NAS E3C "
                "N9D EAD S7D WQD N2D E8D SJD W5D E9C STC WAC N5C E8C S4H W6H NQC "
                "WTH N8H E9H SJH WQH N7H E4D S5H WQS NAH E4C S6S W3D NTD E6D SKD "
                "S7S WKH N3H E7C "
            ),
            scores=(1, -10, 2, 92),
        ),
        RecordedDeal(
            hands=(
                "TS 8S 5S JH 4H KD 7D 4D AC 8C 4C 3C 2C",
                "JS 7S 6S AH QH 8H AD 9D 5D KC JC 9C 5C",
                "QS 9S 4S 3S 2S 9H 7H 5H 3H 2H QD 3D 6C",
                "AS KS KH TH 6H JD TD 8D 6D 2D QC TC 7C",
            ),
            charges="N- E- SQS N- EAH N- S- WJD N- E- S-",
            plays=(
                "N2C E5C S6C WTC W6D N4D E9D SQD W2D NKD E5D S3D N8S E6S S9S WKS "
                "NTS E7S S4S WAS WTD N7D EAD SQS E9C S3S WQC NAC EKC S7H W7C N3C "
                "N8C EJC S2S W8D EQH S3H W6H N4H EJS S2H WKH N5S E8H S5H WTH NJH "
                "N4C EAH S9H WJD "
            ),
            scores=(-6, 38, 0, 0),
        ),
    ),
    "bridge": (
        RecordedDeal(
            hands=(
                "TS 4S 9H 6H 5H 4H 3H AD KD 5D 4D 9C 7C",
                "KS QS 9S 6S 2S TH 7H 2H JD 8D JC TC 4C",
                "AS 5S 3S TD 7D 6D 3D AC KC 8C 6C 3C 2C",
                "JS 8S 7S AH KH QH JH 8H QD 9D 2D QC 5C",
            ),
            passes=("5H 4H 7C", "TH 8D TC", "AS 3S 7D", "7S QD QC"),
            charges="N- EQS S- W- N-",
            plays=(
                "S2C W5C NQC E7C NAD EJD S6D W7D NQD E6S S3D W9D N4D E2S STD W2D "
                "NTS E9S S5S WJS N4S EKS SAC WAS W8S N7S EQS S6C EJC SKC WQH N9C "
                "E4C S3C W8H N6H STC WKH N9H E5H STH WJH N3H E4H W3S NKD E7H S8D "
                "WAH N5D E2H S8C "
            ),
            scores=(-10, 26, 12, 7),
        ),
        RecordedDeal(
            hands=(
                "TS 9S 8S 6H 5H 2H AD KD 8D 7D 4D 8C 5C",
                "QS 7S 5S AH JH 7H 3H JD 5D 3D QC 4C 2C",
                "KS JS 6S KH QH TH 4H QD 9D 2D KC 7C 6C",
                "AS 4S 3S 2S 9H 8H TD 6D AC JC TC 9C 3C",
            ),
            passes=("9S 8D 7D", "5S 3H 2C", "JS KH KC", "3S 8H TD"),
            charges="E- S- W- N-",
            plays=(
                "N2C EQC S7C WJC EQS SKS W9S N5S E7S S6S W4S N8S S6C WTC N5C EKC "
                "EJD S2D W6D NAD N4D E3D STD W7D S3S W2S NTS EJS E5D S9D W8D NKD "
                "EAH SQD WAC N2H N5H EKH S4H W9H N3H E7H S8H W3C EJH STH W9C N6H "
                "E4C SQH WAS N8C "
            ),
            scores=(-7, 20, 13, 0),
        ),
        RecordedDeal(
            hands=(
                "5S 3S AH 3H JD TD 9D 7D 2D QC JC TC 5C",
                "4S QH 9H 8D 6D 4D 3D KC 9C 8C 7C 3C 2C",
                "AS KS TS 8S 7S 6S JH 8H 7H 5H 4H KD 6C",
                "QS JS 9S 2S KH TH 6H 2H AD QD 5D AC 4C",
            ),
            passes=("JD 7D TC", "QH 3D KC", "AS 8H 7H", "2H AD 4C"),
            charges="S- WQS NAH E- S- W-",
            plays=(
                "E2C S6C WKC NJC WQD N9D E4D S7D W3D NTD E8D SKD STS WJS NAS E4S "
                "N5C E3C STC WAC WQS N3S E9H S6S W5D N2D E6D SJD S5H WQH N3H E2H "
                "WTH N7H E4C S4H W6H N8H E9C SJH SKS W2S N5S E8C S8S W9S NQC EAD "
                "S7S WKH NAH E7C "
            ),
            scores=(0, 0, -4, 92),
        ),
        RecordedDeal(
            hands=(
                "TS 8S 5S JH 4H KD 7D 4D AC 8C 4C 3C 2C",
                "JS 7S 6S AH QH 8H AD 9D 5D KC JC 9C 5C",
                "QS 9S 4S 3S 2S 9H 7H 5H 3H 2H QD 3D 6C",
                "AS KS KH TH 6H JD TD 8D 6D 2D QC TC 7C",
            ),
            charges="WJD N- E- SQS WTC N- EAH S- W- N-",
            plays=(
                "N2C E5C S6C W7C WTC NAC E9C SQD WQC N3C EKC S9S N4D E5D S3D WTD "
                "W6D NKD E9D S4S W2D N7D EAD S3H E7S S3S WAS N5S W8D NTS E6S SQS "
                "WTH NJH EQH S2H EJC S9H WKS N4C EJS S2S W6H N8S E8H S5H WKH N4H "
                "WJD N8C EAH S7H "
            ),
            scores=(0, 14, 0, 18),
        ),
    ),
    "chain": (
        RecordedDeal(
            hands=(
                "TS 4S 9H 6H 5H 4H 3H AD KD 5D 4D 9C 7C",
                "KS QS 9S 6S 2S TH 7H 2H JD 8D JC TC 4C",
                "AS 5S 3S TD 7D 6D 3D AC KC 8C 6C 3C 2C",
                "JS 8S 7S AH KH QH JH 8H QD 9D 2D QC 5C",
            ),
            passes=("5H 4H 7C", "TH 8D TC", "AS 3S 7D", "7S QD QC"),
            charges="N- EQS S- W- N- E-",
            plays=(
                "S2C W5C N9C E7C STC WAS NQC E4C N4S E6S S5S W3S EQS S6D WJS NTS "
                "E2S S8C W8S N7S W9D NKD EJD S3D W7D NQD EJC STD NAD E5H S8D W2D "
                "N4D E2H SAC WJH N3H E4H STH WAH W8H N9H E7H S6C WKH N6H EKS SKC "
                "WQH N5D E9S S3C "
            ),
            scores=(-14, 26, 0, 10),
        ),
        RecordedDeal(
            hands=(
                "TS 9S 8S 6H 5H 2H AD KD 8D 7D 4D 8C 5C",
                "QS 7S 5S AH JH 7H 3H JD 5D 3D QC 4C 2C",
                "KS JS 6S KH QH TH 4H QD 9D 2D KC 7C 6C",
                "AS 4S 3S 2S 9H 8H TD 6D AC JC TC 9C 3C",
            ),
            passes=("9S 8D 7D", "5S 3H 2C", "JS KH KC", "3S 8H TD"),
            charges="E- S- W- N-",
            plays=(
                "N2C EQC S7C WJC EQS SKS W9S N5S E7S S6S W4S N8S S6C WTC N5C EKC "
                "EJD S2D W6D NAD N4D E3D STD W7D S3S W2S NTS EJS E5D S9D W8D NKD "
                "EAH SQD WAC N2H N5H EKH S4H W9H N3H E7H S8H W3C EJH STH W9C N6H "
                "E4C SQH WAS N8C "
            ),
            scores=(-7, 20, 13, 0),
        ),
        RecordedDeal(
            hands=(
                "5S 3S AH 3H JD TD 9D 7D 2D QC JC TC 5C",
                "4S QH 9H 8D 6D 4D 3D KC 9C 8C 7C 3C 2C",
                "AS KS TS 8S 7S 6S JH 8H 7H 5H 4H KD 6C",
                "QS JS 9S 2S KH TH 6H 2H AD QD 5D AC 4C",
            ),
            passes=("JD 7D TC", "QH 3D KC", "AS 8H 7H", "2H AD 4C"),
            charges="S- WQS NAH E- S- W- N-",
            plays=(
                "E2C S6C WKC NJC WQD N9D E4D S7D W3D NTD E8D SKD STS WJS NAS E4S "
                "N5C E3C STC WAC WQS N3S E9H S6S W5D N2D E6D SJD S5H WQH N3H E2H "
                "WTH N7H E4C S4H W6H N8H E9C SJH SKS W2S N5S E8C S8S W9S NQC EAD "
                "S7S WKH NAH E7C "
            ),
            scores=(0, 0, -4, 92),
        ),
        RecordedDeal(
            hands=(
                "TS 8S 5S JH 4H KD 7D 4D AC 8C 4C 3C 2C",
                "JS 7S 6S AH QH 8H AD 9D 5D KC JC 9C 5C",
                "QS 9S 4S 3S 2S 9H 7H 5H 3H 2H QD 3D 6C",
                "AS KS KH TH 6H JD TD 8D 6D 2D QC TC 7C",
            ),
            charges="WJD N- E- SQS WTC N- EAH S- W- N- E-",
            plays=(
                "N2C E5C S6C W7C WTC NAC E9C SQD WQC N3C EKC S9S N4D E5D S3D WTD "
                "W6D NKD E9D S4S W2D N7D EAD S3H E7S S3S WAS N5S W8D NTS E6S SQS "
                "WTH NJH EQH S2H EJC S9H WKS N4C EJS S2S W6H N8S E8H S5H WKH N4H "
                "WJD N8C EAH S7H "
            ),
            scores=(0, 14, 0, 18),
        ),
    ),
}
